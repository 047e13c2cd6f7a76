/* SPTT (DMT) data movement: both the peer permute and the (features, peers) shuffle are a
 * transpose of a grid of variable-size blocks. */
#include "internal.h"

#include <stdlib.h>

rt_kstatus rt_kcpu_block_transpose(const void *in, size_t row_bytes, int64_t a, int64_t b,
                                   const int64_t *sizes, void *out)
{
    if (a < 0 || b < 0 || row_bytes == 0 || (a * b > 0 && !sizes)) return RT_K_EINVAL;
    int64_t total = 0;
    for (int64_t i = 0; i < a * b; i++) {
        if (sizes[i] < 0) return RT_K_EINVAL;
        total += sizes[i];
    }
    if (total > 0 && (!in || !out)) return RT_K_EINVAL;
    if (total == 0) return RT_K_OK;
    int64_t *src_start = malloc((size_t)(a * b) * sizeof *src_start);
    if (!src_start) return RT_K_ENOMEM;
    int64_t at = 0;
    for (int64_t i = 0; i < a * b; i++) {
        src_start[i] = at;
        at += sizes[i];
    }
    const char *src = in;
    char *dst = out;
    for (int64_t j = 0; j < b; j++)
        for (int64_t i = 0; i < a; i++) {
            const size_t bytes = (size_t)sizes[i * b + j] * row_bytes;
            memcpy(dst, src + (size_t)src_start[i * b + j] * row_bytes, bytes);
            dst += bytes;
        }
    free(src_start);
    return RT_K_OK;
}

rt_kstatus rt_kcpu_sptt_peer_permute(const void *in, size_t row_bytes, int64_t hosts, int64_t gpus,
                                     const int64_t *rank_rows, void *out)
{
    return rt_kcpu_block_transpose(in, row_bytes, hosts, gpus, rank_rows, out);
}

rt_kstatus rt_kcpu_sptt_shuffle(const void *in, size_t row_bytes, int64_t features, int64_t peers,
                                const int64_t *block_rows, void *out)
{
    return rt_kcpu_block_transpose(in, row_bytes, features, peers, block_rows, out);
}
