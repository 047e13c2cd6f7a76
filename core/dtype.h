/* Numeric types of tensors, tables and communication buffers. */
#ifndef RT_DTYPE_H
#define RT_DTYPE_H

#include <stddef.h>

typedef enum { RT_DT_FP32, RT_DT_TF32, RT_DT_BF16, RT_DT_FP16, RT_DT_FP8, RT_DT_COUNT } rt_dtype;

/* Storage bytes of one element (tf32 is stored as fp32). */
size_t rt_dtype_bytes(rt_dtype t);
const char *rt_dtype_name(rt_dtype t);
/* NULL-terminated list of names, index = enum value; for rt_cfg_get_enum. */
extern const char *const rt_dtype_names[];

#endif
