#include <string.h>

#include "comm.h"

extern const rt_xcomm_ops rt_xcomm_mpi;
#ifdef RT_HAVE_CUDA_BACKEND
extern const rt_xcomm_ops rt_xcomm_nccl;
#endif

const rt_xcomm_ops *const rt_xcomm_backends[] = {&rt_xcomm_mpi,
#ifdef RT_HAVE_CUDA_BACKEND
                                                 &rt_xcomm_nccl,
#endif
                                                 NULL};

const rt_xcomm_ops *rt_xcomm_find(const char *name)
{
    for (int i = 0; rt_xcomm_backends[i]; i++)
        if (!strcmp(rt_xcomm_backends[i]->name, name)) return rt_xcomm_backends[i];
    return NULL;
}
