/* The elementwise and row-wise kernels of the generative-recommender blocks (HSTU, FuXi, MMoE):
 * SiLU, the elementwise product (gating, SwiGLU), layer norm without affine parameters, the
 * row softmax of the MMoE gates and the gate-weighted sum of expert outputs. Statistics are
 * accumulated in double so the reference stays exact on long rows. */
#include "internal.h"

#include <math.h>

/* n >= 0 elements and, when there are any, every pointer present. */
static bool elems_ok(int64_t n, const void *a, const void *b, const void *c)
{
    return n >= 0 && (n == 0 || (a && b && c));
}

static bool rows_ok(int64_t rows, int64_t dim)
{
    return rows >= 0 && dim > 0;
}

static float sigmoidf(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

rt_kstatus rt_kcpu_silu_fwd(const float *x, int64_t n, float *y)
{
    if (!elems_ok(n, x, y, y)) return RT_K_EINVAL;
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i] * sigmoidf(x[i]);
    return RT_K_OK;
}

rt_kstatus rt_kcpu_silu_bwd(const float *x, const float *dy, int64_t n, float *dx)
{
    if (!elems_ok(n, x, dy, dx)) return RT_K_EINVAL;
    for (int64_t i = 0; i < n; i++) {
        const float s = sigmoidf(x[i]);
        dx[i] = dy[i] * s * (1.0f + x[i] * (1.0f - s));
    }
    return RT_K_OK;
}

rt_kstatus rt_kcpu_mul_fwd(const float *a, const float *b, int64_t n, float *y)
{
    if (!elems_ok(n, a, b, y)) return RT_K_EINVAL;
    for (int64_t i = 0; i < n; i++)
        y[i] = a[i] * b[i];
    return RT_K_OK;
}

rt_kstatus rt_kcpu_mul_bwd(const float *a, const float *b, const float *dy, int64_t n, float *da,
                           float *db)
{
    if (!elems_ok(n, a, b, dy) || !elems_ok(n, da, db, da)) return RT_K_EINVAL;
    for (int64_t i = 0; i < n; i++) {
        /* Read everything first: an output may be one of the inputs. */
        const float g = dy[i], ai = a[i], bi = b[i];
        da[i] = g * bi;
        db[i] = g * ai;
    }
    return RT_K_OK;
}

rt_kstatus rt_kcpu_layernorm_fwd(const float *x, int64_t rows, int64_t dim, float eps, float *y,
                                 float *mean, float *rstd)
{
    if (!rows_ok(rows, dim) || !(eps > 0.0f) || (rows > 0 && (!x || !y || !mean || !rstd)))
        return RT_K_EINVAL;
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * dim;
        double s = 0.0, s2 = 0.0;
        for (int64_t e = 0; e < dim; e++)
            s += xr[e];
        const double mu = s / (double)dim;
        for (int64_t e = 0; e < dim; e++)
            s2 += ((double)xr[e] - mu) * ((double)xr[e] - mu);
        const float m = (float)mu, rs = (float)(1.0 / sqrt(s2 / (double)dim + (double)eps));
        mean[r] = m;
        rstd[r] = rs;
        for (int64_t e = 0; e < dim; e++)
            y[r * dim + e] = (xr[e] - m) * rs;
    }
    return RT_K_OK;
}

rt_kstatus rt_kcpu_layernorm_bwd(const float *x, const float *dy, int64_t rows, int64_t dim,
                                 const float *mean, const float *rstd, float *dx)
{
    if (!rows_ok(rows, dim) || (rows > 0 && (!x || !dy || !mean || !rstd || !dx)))
        return RT_K_EINVAL;
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * dim, *gr = dy + r * dim;
        /* dx = rstd (dy - mean(dy) - xhat mean(dy xhat)) */
        double sg = 0.0, sgx = 0.0;
        for (int64_t e = 0; e < dim; e++) {
            const double xh = ((double)xr[e] - mean[r]) * rstd[r];
            sg += gr[e];
            sgx += gr[e] * xh;
        }
        const float mg = (float)(sg / (double)dim), mgx = (float)(sgx / (double)dim);
        for (int64_t e = 0; e < dim; e++) {
            const float xh = (xr[e] - mean[r]) * rstd[r];
            dx[r * dim + e] = rstd[r] * (gr[e] - mg - xh * mgx);
        }
    }
    return RT_K_OK;
}

rt_kstatus rt_kcpu_softmax_fwd(const float *x, int64_t rows, int64_t dim, float *y)
{
    if (!rows_ok(rows, dim) || (rows > 0 && (!x || !y))) return RT_K_EINVAL;
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * dim;
        float mx = xr[0];
        for (int64_t e = 1; e < dim; e++)
            mx = fmaxf(mx, xr[e]);
        double z = 0.0;
        for (int64_t e = 0; e < dim; e++)
            z += exp((double)(xr[e] - mx));
        for (int64_t e = 0; e < dim; e++)
            y[r * dim + e] = (float)(exp((double)(xr[e] - mx)) / z);
    }
    return RT_K_OK;
}

rt_kstatus rt_kcpu_softmax_bwd(const float *y, const float *dy, int64_t rows, int64_t dim,
                               float *dx)
{
    if (!rows_ok(rows, dim) || (rows > 0 && (!y || !dy || !dx))) return RT_K_EINVAL;
    for (int64_t r = 0; r < rows; r++) {
        const float *yr = y + r * dim, *gr = dy + r * dim;
        double s = 0.0;
        for (int64_t e = 0; e < dim; e++)
            s += (double)yr[e] * gr[e];
        for (int64_t e = 0; e < dim; e++)
            dx[r * dim + e] = yr[e] * (gr[e] - (float)s);
    }
    return RT_K_OK;
}

rt_kstatus rt_kcpu_mix_fwd(const float *x, const float *g, int64_t rows, int64_t nexp, int64_t dim,
                           float *y)
{
    if (rows < 0 || nexp <= 0 || dim <= 0 || (rows > 0 && (!x || !g || !y))) return RT_K_EINVAL;
    for (int64_t r = 0; r < rows; r++) {
        float *yr = y + r * dim;
        for (int64_t c = 0; c < dim; c++)
            yr[c] = 0.0f;
        for (int64_t e = 0; e < nexp; e++) {
            const float w = g[r * nexp + e], *xr = x + (e * rows + r) * dim;
            for (int64_t c = 0; c < dim; c++)
                yr[c] += w * xr[c];
        }
    }
    return RT_K_OK;
}

rt_kstatus rt_kcpu_mix_bwd(const float *x, const float *g, const float *dy, int64_t rows,
                           int64_t nexp, int64_t dim, float *dx, float *dg)
{
    if (rows < 0 || nexp <= 0 || dim <= 0 || (rows > 0 && (!x || !g || !dy || !dx || !dg)))
        return RT_K_EINVAL;
    for (int64_t e = 0; e < nexp; e++)
        for (int64_t r = 0; r < rows; r++) {
            const float w = g[r * nexp + e], *xr = x + (e * rows + r) * dim, *gr = dy + r * dim;
            float *dxr = dx + (e * rows + r) * dim;
            double s = 0.0;
            for (int64_t c = 0; c < dim; c++) {
                dxr[c] = w * gr[c];
                s += (double)gr[c] * xr[c];
            }
            dg[r * nexp + e] = (float)s;
        }
    return RT_K_OK;
}
