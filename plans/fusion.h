/* Operator fusion of the sparse lookup (RecIS, seed 001 section 3.1 and table 1): the plan key
 * `fusion` says how the owner's embedding gathers launch.
 *   unset:  one lookup op per exchange, counted at its minimum bytes (the graph before the key);
 *   none:   one gather launch per feature (TorchRec, TensorFlow), each into its own fp32 buffer
 *           that is then copied into the embedding AlltoAll's message: a write and a read of
 *           every output element that a fused kernel does not make;
 *   sparse: one gather launch over every table the rank serves in the exchange, writing the
 *           message in place (with a reduced comm precision it still writes fp32 once and
 *           converts, so the round trip stays).
 * The sender's bucketize (seed 001's fused ID preprocessing) follows: none builds one op per
 * feature reading and writing only that feature's IDs (the same bytes in all, one launch
 * each), sparse and unset one op.
 * Per-feature ops carry the feature's index inside the exchange in their `layer` field. */
#ifndef RT_FUSION_H
#define RT_FUSION_H

#include "dedup.h"
#include "scenario.h"

typedef enum { RT_FUSION_UNSET, RT_FUSION_NONE, RT_FUSION_SPARSE } rt_fusion;

/* Reads the plan key `fusion` (absent: unset). Refuses it with owner-side dedup (lookup,
 * two_stage), whose distinct-row gather is not built per feature or fused. Returns 0 or -1
 * (message with file:line:col). */
int rt_fusion_parse(const rt_scenario *s, rt_dedup_mode dedup, rt_fusion *out);

/* Bytes of the fp32 staging round trip of OUT_ELEMS gathered elements: written by the gather,
 * read back by the copy into the message. */
static inline double rt_fusion_round_trip(double out_elems)
{
    return 2.0 * 4.0 * out_elems;
}

#endif
