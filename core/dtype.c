#include "dtype.h"

const char *const rt_dtype_names[] = {"fp32", "tf32", "bf16", "fp16", "fp8", NULL};

size_t rt_dtype_bytes(rt_dtype t)
{
    static const size_t bytes[RT_DT_COUNT] = {4, 4, 2, 2, 1};
    return (unsigned)t < RT_DT_COUNT ? bytes[t] : 0;
}

const char *rt_dtype_name(rt_dtype t)
{
    return (unsigned)t < RT_DT_COUNT ? rt_dtype_names[t] : "?";
}
