/* What-if faults and tenants of a topology (`faults:`, a list in the topology file or in the
 * scenario's topology section): a link of the fabric left with a fraction of its bandwidth,
 * because it is degraded (`bandwidth: 0.5`, a NIC trained at half speed) or because another
 * tenant's traffic takes a share of it (`background: 0.3`). Each entry names one link the way
 * sim/simgrid_platform.h names it:
 *   {link: nvlink, rank: R, ...}            nvlink-R (device R's scale-up port)
 *   {link: nic, node: H, nic: K, ...}       nic-H-K
 *   {link: uplink, plane: P, leaf: L, ...}  uplink-P-L (leaf L of plane P to the spines)
 * The link keeps bandwidth x (1 - background) of its healthy bandwidth in both directions.
 * An uplink may also lose `ports_down: N` of its radix/2 spine ports (failed cables or spine
 * ports): under scale_out.ecmp: balanced the platform's uplink-P-L is the leaf's ports taken as
 * one ECMP-balanced link, so traffic falls to the remaining ports and the link keeps
 * (ports - N) / ports; under ecmp: hash the leaf's first N ports (spines 0..N-1) leave every
 * route and flows rehash over the others (rt_fault_factor's port term is then not applied:
 * PORTS = 0). N = ports (a leaf cut off) is refused.
 * Indices are checked against the node count once the scenario sets it (rt_faults_check). */
#ifndef RT_FAULTS_H
#define RT_FAULTS_H

struct rt_cfg;
struct fy_node;
struct rt_json;

typedef enum { RT_FAULT_NVLINK, RT_FAULT_NIC, RT_FAULT_UPLINK, RT_FAULT_LINK_COUNT } rt_fault_link;

extern const char *const rt_fault_link_names[];

enum { RT_FAULTS_MAX = 64 };

typedef struct rt_fault {
    rt_fault_link link;
    int a, b;           /* nvlink: rank, -; nic: node, nic; uplink: plane, leaf */
    double bandwidth;   /* fraction of the healthy bandwidth the link still has, (0, 1] */
    double background;  /* fraction a competing tenant takes, [0, 1) */
    int ports_down;     /* uplink: failed spine ports of the leaf */
    struct rt_cfg *cfg; /* where the entry was written, for rt_faults_check's errors */
    struct fy_node *at;
} rt_fault;

typedef struct rt_faults {
    int n;
    rt_fault f[RT_FAULTS_MAX];
} rt_faults;

/* Parses the `faults:` sequence SEQ; an override replaces the whole list. 0 or -1 after a
 * located error. */
int rt_faults_parse(struct rt_cfg *c, struct fy_node *seq, rt_faults *out);

/* The bandwidth left on a faulted link whose leaf has PORTS spine ports:
 * bandwidth x (1 - background) x (ports - ports_down) / ports. */
static inline double rt_fault_factor(const rt_fault *f, int ports)
{
    double up = f->ports_down > 0 && ports > 0 ? (double)(ports - f->ports_down) / ports : 1.0;
    return f->bandwidth * (1.0 - f->background) * up;
}

/* The product of the factors of every entry naming LINK (A, B), 1 when none; PORTS as for
 * rt_fault_factor. */
double rt_faults_factor(const rt_faults *fs, rt_fault_link link, int a, int b, int ports);

/* Checks every entry's indices against the cluster: RANKS devices in NODES nodes, NICS per
 * node, PLANES planes of LEAVES leaves. 0, or -1 after an error located at the entry. */
int rt_faults_check(const rt_faults *fs, int nodes, int devices, int nics, int planes, int leaves,
                    int ports);

/* Writes "faults": {"model": HOW, "links": [{link, a, b, bandwidth, background, ports_down,
 * factor}...]} into an engine's settings when FS has entries (nothing otherwise): HOW is the
 * engine's account of what it models and what it cannot. PORTS as for rt_fault_factor. */
void rt_faults_json(struct rt_json *j, const rt_faults *fs, int ports, const char *how);

#endif
