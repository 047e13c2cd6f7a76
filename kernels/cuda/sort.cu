/* The only users of CUB: radix sort, run-length encoding and scan, behind C-style wrappers so
 * the kernel files stay plain CUDA C. */
#include "internal.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>

rt_kstatus rt_kcuda_sort_pairs(void *temp, size_t *temp_bytes, const int64_t *keys_in,
                               int64_t *keys_out, const int64_t *vals_in, int64_t *vals_out,
                               int64_t n, int end_bit, rt_kcuda_ctx *c)
{
    if (end_bit < 64) {
        /* Non-negative keys below 2^end_bit: sorting them as unsigned on fewer bits is the
         * same order and saves passes. */
        RT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, *temp_bytes, (const uint64_t *)keys_in,
                                                      (uint64_t *)keys_out, vals_in, vals_out, n, 0,
                                                      end_bit, c->stream));
    } else {
        RT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, *temp_bytes, keys_in, keys_out, vals_in,
                                                      vals_out, n, 0, 64, c->stream));
    }
    return RT_K_OK;
}

rt_kstatus rt_kcuda_run_length(void *temp, size_t *temp_bytes, const int64_t *keys, int64_t n,
                               int64_t *run_keys, int64_t *run_counts, int64_t *num_runs,
                               rt_kcuda_ctx *c)
{
    RT_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(temp, *temp_bytes, keys, run_keys, run_counts,
                                                     num_runs, n, c->stream));
    return RT_K_OK;
}

rt_kstatus rt_kcuda_exclusive_sum(void *temp, size_t *temp_bytes, const int64_t *in, int64_t *out,
                                  int64_t n, rt_kcuda_ctx *c)
{
    RT_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp, *temp_bytes, in, out, n, c->stream));
    return RT_K_OK;
}
