/* Every CUDA runtime and cuBLAS call is checked through one macro per library; a failure is
 * printed with its call site and turned into RT_K_EDEVICE for the caller. */
#ifndef RT_KCUDA_CHECK_H
#define RT_KCUDA_CHECK_H

#include "kernels.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>

#define RT_CUDA_CHECK(call)                                                                        \
    do {                                                                                           \
        const cudaError_t rt_err_ = (call);                                                        \
        if (rt_err_ != cudaSuccess) {                                                              \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                          \
                    cudaGetErrorString(rt_err_));                                                  \
            return RT_K_EDEVICE;                                                                   \
        }                                                                                          \
    } while (0)

#define RT_CUBLAS_CHECK(call)                                                                      \
    do {                                                                                           \
        const cublasStatus_t rt_st_ = (call);                                                      \
        if (rt_st_ != CUBLAS_STATUS_SUCCESS) {                                                     \
            fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #call,            \
                    (int)rt_st_);                                                                  \
            return RT_K_EDEVICE;                                                                   \
        }                                                                                          \
    } while (0)

/* Propagates a non-OK status from a helper. */
#define RT_K_TRY(expr)                                                                             \
    do {                                                                                           \
        const rt_kstatus rt_s_ = (expr);                                                           \
        if (rt_s_ != RT_K_OK) return rt_s_;                                                        \
    } while (0)

#endif
