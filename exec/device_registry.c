#include <string.h>

#include "device.h"

extern const rt_xdev_ops rt_xdev_cpu;
#ifdef RT_HAVE_CUDA_BACKEND
extern const rt_xdev_ops rt_xdev_cuda;
#endif

const rt_xdev_ops *const rt_xdev_backends[] = {&rt_xdev_cpu,
#ifdef RT_HAVE_CUDA_BACKEND
                                               &rt_xdev_cuda,
#endif
                                               NULL};

const rt_xdev_ops *rt_xdev_find(const char *name)
{
    for (int i = 0; rt_xdev_backends[i]; i++)
        if (!strcmp(rt_xdev_backends[i]->name, name)) return rt_xdev_backends[i];
    return NULL;
}
