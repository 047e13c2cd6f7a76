/* One actor per (rank, stream) walks that stream's ops in order, waiting for dependencies
 * on the rank's other streams. A kernel sleeps its roofline time (an H2D kernel is a flow on
 * the device's PCIe link instead). A collective synchronizes its group instance: the last
 * member to arrive builds the instance's flows (simgrid_collectives.c), starts one flow actor
 * per flow, waits for all of them and for the algorithm's per-step latencies, then releases
 * the others. Every rank is simulated; a rank without costs of its own (statistical mode)
 * uses its representative's. */
#include "simgrid_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/cond.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <simgrid/mutex.h>
#include <simgrid/semaphore.h>

#include "collective_model.h"
#include "simgrid_collectives.h"
#include "simgrid_cores.h"

/* Every SimGrid call that can report failure goes through this: a NULL handle or a
 * non-zero status ends the simulation process with the call named in the message. */
#define RT_SG_CHECK(sim, expr)                                                                     \
    do {                                                                                           \
        if (!(expr)) sim_fail((sim), "SimGrid call failed: " #expr);                               \
    } while (0)

typedef struct instance {
    int arrived, left;
    sg_sem_t sem;
    double end;
} instance;

typedef struct sim {
    const rt_sg_job *job;
    const rt_graph *g;
    int n_ops, world;
    sg_host_t *hosts;
    sg_mailbox_t *mbox;  /* [host] flows to the host meet their receiver here (transfer()) */
    unsigned char *done; /* [rank * n_ops + op] */
    sg_cond_t *cond;     /* [rank] signalled when one of its ops ends */
    sg_mutex_t *mutex;   /* [rank] */
    instance **inst;     /* [op][instance], allocated when the op's first member arrives */
    int *ops_of[RT_STREAM_COUNT];
    int n_ops_of[RT_STREAM_COUNT];
    rt_sg_flowset flows; /* scratch: filled and copied out without yielding */
    rt_sg_cores cores;   /* kernels on shared host cores (node.cores) */
} sim;

typedef struct rank_actor {
    sim *S;
    int rank;
    int stream;
} rank_actor;

typedef struct flow_job {
    sg_host_t src, dst;
    int dst_host;
    double bytes;
} flow_job;

static void sim_fail(sim *S, const char *msg)
{
    rt_sg_out *o = S->job->out;
    o->status = 1;
    snprintf(o->msg, sizeof o->msg, "%s", msg);
    fflush(NULL);
    _Exit(3);
}

typedef struct op_ctx {
    sim *S;
    int op;
} op_ctx;

static const rt_op_cost *cost_of(void *ctx, int rank)
{
    const op_ctx *c = ctx;
    return rt_graph_cost(c->S->g, c->op, c->S->job->rep_of[rank]);
}

static long at(const sim *S, int op, int rank)
{
    return (long)op * S->g->n_reps + S->job->rep_of[rank];
}

/* Ranks that are representatives report their times; the others only take part. */
static void record(sim *S, int op, int rank, double start, double end)
{
    int rep = S->job->rep_of[rank];
    if (S->g->rep_rank[rep] != rank) return;
    S->job->out->start[(long)op * S->g->n_reps + rep] = start;
    S->job->out->end[(long)op * S->g->n_reps + rep] = end;
}

static void mark_done(sim *S, int rank, int op)
{
    S->done[(long)rank * S->n_ops + op] = 1;
    sg_mutex_lock(S->mutex[rank]);
    sg_cond_notify_all(S->cond[rank]);
    sg_mutex_unlock(S->mutex[rank]);
}

static void wait_deps(sim *S, int rank, int op)
{
    const int *deps = rt_graph_deps(S->g, op);
    for (int i = 0; i < S->g->ops[op].n_deps; i++) {
        const unsigned char *d = &S->done[(long)rank * S->n_ops + deps[i]];
        if (*d) continue;
        rt_sg_cores_wait(&S->cores, rank);
        sg_mutex_lock(S->mutex[rank]);
        while (!*d)
            sg_cond_wait(S->cond[rank], S->mutex[rank]);
        sg_mutex_unlock(S->mutex[rank]);
        rt_sg_cores_go(&S->cores, rank);
    }
}

/* Stack of the actors that move flows, in KiB: they post SimGrid puts or gets (transfer(), the
 * host batches of run_flows), wait, release a semaphore and end. Tens of thousands of them run
 * at once at 16384 GPUs and SimGrid zeroes every stack it allocates (calloc), so the stack is
 * RSS. Measured high water mark (zeroed stacks scanned after the run; flat, fused, sptt, hsp,
 * pipeline, step-wise at 32 to 1024 GPUs, one actor per flow): 3.2 KiB for these actors, 5.0
 * KiB for the rank actors (whose stack is contexts/stack-size, settings_argv); with a guard
 * page below every stack (contexts/guard-size:4096) the same runs, with the host batches too,
 * and the simgrid tests ran clean. ASan's thread contexts need far more. */
#ifdef __SANITIZE_ADDRESS__
enum { RT_SG_FLOW_STACK_KIB = 1024 };
#else
enum { RT_SG_FLOW_STACK_KIB = 16 };
#endif

static void receiver_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    sg_mailbox_get(sg_actor_self_get_data());
}

/* Starts ACTOR (created on HOST) running MAIN with DATA on a flow's small stack. */
static void start_small(sim *S, const char *name, sg_host_t host, void (*main)(int, char **),
                        void *data)
{
    sg_actor_t a = sg_actor_init(name, host);
    RT_SG_CHECK(S, a);
    sg_actor_set_stacksize(a, RT_SG_FLOW_STACK_KIB);
    sg_actor_set_data(a, data);
    sg_actor_start(a, main, 0, NULL);
}

/* BYTES from SRC (the calling actor's host) to DST as one SimGrid communication, returning
 * when it has arrived: a put into DST's mailbox met by a receiver actor started on DST (the
 * step-wise flows of pairs mode; why not sg_host_sendto: run_flows). */
static void transfer(sim *S, sg_host_t dst, int dst_host, double bytes)
{
    start_small(S, "recv", dst, receiver_main, S->mbox[dst_host]);
    /* sg_host_sendto took the size as uint64_t, the put takes a long: the same truncation. */
    sg_mailbox_put(S->mbox[dst_host], S, (long)bytes);
}

/* The flows of one round that one host sends (or receives): one actor on that host posts
 * them all at once and waits for them. */
typedef struct host_batch {
    sim *S;
    const flow_job *jobs;
    const int *idx; /* [n]: the batch's flows, in flow order */
    int n;
    sg_sem_t done; /* senders: released once the batch's puts have arrived; receivers: NULL */
} host_batch;

static void batch_wait(sg_comm_t *comms, int n, sg_sem_t done)
{
    sg_comm_wait_all(comms, (size_t)n);
    free(comms);
    if (done) sg_sem_release(done);
}

static void send_batch_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    host_batch *b = sg_actor_self_get_data();
    sg_comm_t *comms = malloc(sizeof *comms * (size_t)b->n);
    if (!comms) sim_fail(b->S, "out of memory for flows");
    /* sg_host_sendto took the size as uint64_t, the put takes a long: the same truncation. */
    for (int i = 0; i < b->n; i++) {
        const flow_job *f = &b->jobs[b->idx[i]];
        RT_SG_CHECK(b->S,
                    comms[i] = sg_mailbox_put_async(b->S->mbox[f->dst_host], b->S, (long)f->bytes));
    }
    batch_wait(comms, b->n, b->done);
}

static void recv_batch_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    const host_batch *b = sg_actor_self_get_data();
    /* Everything of B is read before the first SimGrid call: the caller may free it once the
     * round's puts have arrived (the gets may still be waiting for other collectives' puts). */
    sim *S = b->S;
    int n = b->n;
    sg_mailbox_t box = S->mbox[b->jobs[b->idx[0]].dst_host];
    sg_comm_t *comms = malloc(sizeof *comms * (size_t)n);
    void **data = malloc(sizeof *data * (size_t)n);
    if (!comms || !data) sim_fail(S, "out of memory for flows");
    for (int i = 0; i < n; i++)
        RT_SG_CHECK(S, comms[i] = sg_mailbox_get_async(box, &data[i]));
    batch_wait(comms, n, NULL);
    free(data);
}

/* Flow indices grouped by KEY (a host), in flow order within a group; FIRST[g]..FIRST[g+1]
 * delimit group g. Returns the number of groups. */
static int group_by(const int *key, int n, int n_keys, int *idx, int *first, int *slot)
{
    int groups = 0;
    for (int k = 0; k < n_keys; k++)
        slot[k] = -1;
    int *count = calloc((size_t)n + 1, sizeof(int));
    int *group_of = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!count || !group_of) {
        free(count), free(group_of);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (slot[key[i]] < 0) slot[key[i]] = groups++;
        group_of[i] = slot[key[i]];
        count[group_of[i] + 1]++;
    }
    for (int g = 0; g < groups; g++)
        count[g + 1] += count[g];
    memcpy(first, count, sizeof(int) * (size_t)(groups + 1));
    for (int i = 0; i < n; i++)
        idx[count[group_of[i]]++] = i;
    for (int i = 0; i < n; i++)
        slot[key[i]] = -1;
    free(count), free(group_of);
    return groups;
}

/* Runs the flows in S->flows to completion and counts their bytes on their links. Each flow
 * is one SimGrid communication: a put into its destination host's mailbox met by a get on
 * that host, the same network action as sg_host_sendto(source, destination, bytes) (SimGrid
 * 3.32's CommImpl::start calls communicate(from, to, size, rate) for both). One actor per
 * source host posts that host's puts and one per destination host its gets, all at once, so
 * an AlltoAll over 16384 GPUs runs two actors per host involved, not per flow. Not
 * sg_host_sendto: SimGrid 3.32 detaches a host-to-host communication and keeps every detached
 * one in a single list that it scans whole (std::list::remove) each time one ends, so N
 * concurrent flows cost N^2 (54 % of a 2048-GPU run). A get may take any put waiting in its
 * host's mailbox (another collective's): every one is a communication to that host, so route
 * and size do not depend on which it takes, and gets and puts are posted in equal numbers per
 * host at the same instant. Returns the longest route latency among the flows: what SimGrid
 * charged the round (before the network model's latency factor). */
static double run_flows(sim *S)
{
    rt_sg_flowset *fs = &S->flows;
    int n = fs->n_flows, n_hosts = S->job->p->n_hosts;
    double lat = 0;
    if (n == 0) return 0;
    flow_job *jobs = malloc(sizeof *jobs * (size_t)n);
    int *key = malloc(sizeof(int) * 2 * (size_t)n), *idx = malloc(sizeof(int) * 2 * (size_t)n);
    int *first = malloc(sizeof(int) * 2 * ((size_t)n + 1)),
        *slot = malloc(sizeof(int) * (size_t)n_hosts);
    host_batch *batch = malloc(sizeof *batch * 2 * (size_t)n);
    sg_sem_t done = sg_sem_init(0);
    if (!jobs || !key || !idx || !first || !slot || !batch) sim_fail(S, "out of memory for flows");
    RT_SG_CHECK(S, done);
    for (int i = 0; i < n; i++) {
        const rt_sg_flow *fl = &fs->flows[i];
        jobs[i] =
            (flow_job){S->hosts[fl->src_host], S->hosts[fl->dst_host], fl->dst_host, fl->bytes};
        key[i] = fl->src_host;
        key[n + i] = fl->dst_host;
        lat = fl->latency > lat ? fl->latency : lat;
        for (int k = 0; k < fl->n_links; k++)
            S->job->out->link_bytes[fl->links[k]] += fl->bytes;
    }
    S->job->out->flows += n;
    int senders = group_by(key, n, n_hosts, idx, first, slot);
    int receivers = group_by(key + n, n, n_hosts, idx + n, first + n + 1, slot);
    if (senders < 0 || receivers < 0) sim_fail(S, "out of memory for flows");
    /* Starting the actors yields: S->flows may be refilled by another call meanwhile, so
     * everything needed was copied into JOBS first. Receivers first: a put finds its get. */
    for (int g = 0; g < receivers; g++) {
        const int *r = idx + n + first[n + 1 + g];
        batch[g] = (host_batch){S, jobs, r, first[n + 2 + g] - first[n + 1 + g], NULL};
        start_small(S, "flows-in", jobs[r[0]].dst, recv_batch_main, &batch[g]);
    }
    for (int g = 0; g < senders; g++) {
        const int *r = idx + first[g];
        batch[receivers + g] = (host_batch){S, jobs, r, first[g + 1] - first[g], done};
        start_small(S, "flows-out", jobs[r[0]].src, send_batch_main, &batch[receivers + g]);
    }
    /* The round ends when every put has arrived. Not waiting for the gets: a get may have met
     * another collective's put and end with it; the receivers need nothing of this call once
     * they have posted their gets, which they do before any flow can arrive. */
    for (int i = 0; i < senders; i++)
        sg_sem_acquire(done);
    sg_sem_destroy(done);
    free(jobs), free(key), free(idx), free(first), free(slot), free(batch);
    return lat;
}

/* The group instance's traffic as one round of concurrent flows (or, step-wise, as the
 * algorithm's dependent rounds), each flow paying its route's latency in SimGrid (and the
 * network model's latency factor and TCP-gamma cap); then what the analytic model charges
 * beyond the latency the rounds paid: the software base and the steps one bulk round does
 * not see. */
/* Step-wise with point-to-point dependencies (pairs mode): on each lane (a ring's channel) a
 * member starts its flows of round r once every flow of round r - 1 addressed to it on that
 * lane has arrived, as a ring's step s waits for step s - 1 from its predecessor; its own
 * earlier sends may still be on the wire (NCCL posts the next step without waiting for the
 * previous send to land); no barrier across the group or the lanes. The depth of NCCL's
 * step FIFO (8 slots) is not modelled. */
typedef struct steps {
    sim *S;
    rt_sg_flow *flows; /* every round's flows, grouped by (sender, round) */
    int n_flows, rounds, members, lanes;
    rt_group group;
    int *first;    /* [seqs * rounds + 1]: flows of (sequence, round) */
    int *expected; /* [sequence * rounds + round]: flows addressed to the sequence */
    int *received;
    sg_mutex_t mutex;
    sg_cond_t arrived;
    sg_sem_t done; /* one release per member */
} steps;

typedef struct step_flow {
    steps *st;
    const rt_sg_flow *fl;
    int round;
    sg_sem_t sent;
} step_flow;

typedef struct step_member {
    steps *st;
    int member; /* sequence: member x lanes + lane */
} step_member;

static int member_of(const steps *st, int rank)
{
    return rt_group_index(st->group, rank);
}

/* The sequence a flow is sent on, and the one it is addressed to. */
static int seq_from(const steps *st, const rt_sg_flow *fl)
{
    return member_of(st, fl->sender) * st->lanes + fl->lane;
}
static int seq_to(const steps *st, const rt_sg_flow *fl)
{
    return member_of(st, fl->receiver) * st->lanes + fl->lane;
}

static void step_flow_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    step_flow *j = sg_actor_self_get_data();
    steps *st = j->st;
    transfer(st->S, st->S->hosts[j->fl->dst_host], j->fl->dst_host, j->fl->bytes);
    sg_mutex_lock(st->mutex);
    st->received[seq_to(st, j->fl) * st->rounds + j->round]++;
    sg_cond_notify_all(st->arrived);
    sg_mutex_unlock(st->mutex);
    sg_sem_release(j->sent);
}

static void step_member_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    step_member *m = sg_actor_self_get_data();
    steps *st = m->st;
    int lo = st->first[m->member * st->rounds], hi = st->first[(m->member + 1) * st->rounds];
    step_flow *jobs = malloc(sizeof *jobs * (size_t)(hi > lo ? hi - lo : 1));
    sg_sem_t sent = sg_sem_init(0);
    if (!jobs) sim_fail(st->S, "out of memory for step-wise flows");
    RT_SG_CHECK(st->S, sent);
    for (int r = 0; r < st->rounds; r++) {
        long prev = (long)m->member * st->rounds + r - 1;
        if (r > 0) {
            sg_mutex_lock(st->mutex);
            while (st->received[prev] < st->expected[prev])
                sg_cond_wait(st->arrived, st->mutex);
            sg_mutex_unlock(st->mutex);
        }
        for (int i = st->first[prev + 1]; i < st->first[prev + 2]; i++) {
            jobs[i - lo] = (step_flow){st, &st->flows[i], r, sent};
            start_small(st->S, "step", st->S->hosts[st->flows[i].src_host], step_flow_main,
                        &jobs[i - lo]);
        }
    }
    for (int i = lo; i < hi; i++)
        sg_sem_acquire(sent);
    sg_sem_destroy(sent);
    free(jobs);
    sg_sem_release(st->done);
}

/* Every round's flows of CALL, grouped by (sender, round), their links' bytes counted. */
static void steps_build(steps *st, rt_sg_call *call)
{
    sim *S = st->S;
    const char *why = NULL;
    int n = 0, cap = 0, *round_of = NULL;
    for (int r = 0; r < st->rounds; r++) {
        call->round = r;
        rt_sg_flowset_clear(&S->flows);
        if (rt_sg_collective_traffic(call, &S->flows, &why) < 0)
            sim_fail(S, why ? why : "out of memory for flows");
        for (int i = 0; i < S->flows.n_flows; i++) {
            if (n == cap) {
                cap = cap ? 2 * cap : 1024;
                st->flows = realloc(st->flows, sizeof *st->flows * (size_t)cap);
                round_of = realloc(round_of, sizeof *round_of * (size_t)cap);
                if (!st->flows || !round_of) sim_fail(S, "out of memory for step-wise flows");
            }
            const rt_sg_flow *fl = &S->flows.flows[i];
            for (int k = 0; k < fl->n_links; k++)
                S->job->out->link_bytes[fl->links[k]] += fl->bytes;
            round_of[n] = r;
            st->lanes = fl->lane + 1 > st->lanes ? fl->lane + 1 : st->lanes;
            st->flows[n++] = *fl;
        }
    }
    S->job->out->flows += n;
    size_t cells = (size_t)st->members * (size_t)st->lanes * (size_t)st->rounds;
    st->first = calloc(cells + 1, sizeof(int));
    st->expected = calloc(cells, sizeof(int));
    st->received = calloc(cells, sizeof(int));
    rt_sg_flow *sorted = malloc(sizeof *sorted * (size_t)(n ? n : 1));
    if (!st->first || !st->expected || !st->received || !sorted)
        sim_fail(S, "out of memory for step-wise flows");
    for (int i = 0; i < n; i++) {
        st->first[seq_from(st, &st->flows[i]) * st->rounds + round_of[i] + 1]++;
        st->expected[seq_to(st, &st->flows[i]) * st->rounds + round_of[i]]++;
    }
    for (size_t c = 0; c < cells; c++)
        st->first[c + 1] += st->first[c];
    int *next = malloc(sizeof(int) * (cells ? cells : 1));
    if (!next) sim_fail(S, "out of memory for step-wise flows");
    memcpy(next, st->first, sizeof(int) * cells);
    for (int i = 0; i < n; i++)
        sorted[next[seq_from(st, &st->flows[i]) * st->rounds + round_of[i]]++] = st->flows[i];
    free(next);
    free(round_of);
    free(st->flows);
    st->flows = sorted;
    st->n_flows = n;
}

/* The route latency along the longest chain of dependent flows: from each sequence, its
 * first flow of each round to that flow's receiving sequence. */
static double steps_chain_latency(const steps *st)
{
    double worst = 0;
    for (int m0 = 0; m0 < st->members * st->lanes; m0++) {
        double sum = 0;
        for (int r = 0, m = m0; r < st->rounds; r++) {
            int lo = st->first[m * st->rounds + r];
            if (lo == st->first[m * st->rounds + r + 1]) break;
            sum += st->flows[lo].latency;
            m = seq_to(st, &st->flows[lo]);
        }
        worst = sum > worst ? sum : worst;
    }
    return worst;
}

/* Runs CALL's rounds with point-to-point dependencies; returns the route latency paid along
 * its longest dependency chain. */
static double run_steps(sim *S, rt_sg_call *call, int rounds)
{
    steps st = {.S = S, .rounds = rounds, .members = call->group.size, .group = call->group};
    steps_build(&st, call);
    double paid = steps_chain_latency(&st);
    int seqs = st.members * st.lanes;
    step_member *ms = malloc(sizeof *ms * (size_t)(seqs ? seqs : 1));
    if (!ms) sim_fail(S, "out of memory for step-wise flows");
    RT_SG_CHECK(S, st.mutex = sg_mutex_init());
    RT_SG_CHECK(S, st.arrived = sg_cond_init());
    RT_SG_CHECK(S, st.done = sg_sem_init(0));
    for (int m = 0; m < seqs; m++) {
        ms[m] = (step_member){&st, m};
        int rank = rt_sg_member(call, m / st.lanes);
        sg_actor_t a = sg_actor_init("step-member", S->hosts[rt_platform_gpu(S->job->p, rank)]);
        RT_SG_CHECK(S, a);
        sg_actor_set_data(a, &ms[m]);
        sg_actor_start(a, step_member_main, 0, NULL);
    }
    for (int m = 0; m < seqs; m++)
        sg_sem_acquire(st.done);
    sg_sem_destroy(st.done);
    sg_cond_destroy(st.arrived);
    sg_mutex_destroy(st.mutex);
    free(ms), free(st.flows), free(st.first), free(st.expected), free(st.received);
    return paid;
}

static void run_collective(sim *S, int op, int rank)
{
    const rt_sg_job *job = S->job;
    const rt_op *o = &S->g->ops[op];
    int base = rt_group_base(o->group, rank);
    op_ctx ctx = {S, op};
    rt_sg_call call = {.t = job->t,
                       .kind = o->coll,
                       .algo = job->algo[at(S, op, base)],
                       .group = o->group,
                       .base = base,
                       .cost = cost_of,
                       .ctx = &ctx,
                       .round = -1,
                       .chunks = job->sg->chunks,
                       .wire = 1};
    const char *why = NULL;
    const rt_op_cost *c = cost_of(&ctx, base);
    rt_coll_call model = {.kind = o->coll,
                          .algo = call.algo,
                          .group = o->group,
                          .rank = base,
                          .bytes = c->bytes,
                          .send = c->send,
                          .recv = c->recv};
    rt_coll_time ct;
    if (rt_coll_model_time(job->t, &model, &ct, &why) < 0) sim_fail(S, why);
    /* A calibrated curve (the topology's `calibration:`) has no links to load: the instance
     * lasts the time measured on the machine, as in the analytic engine. */
    if (ct.measured) {
        sg_actor_sleep_for(ct.total_s);
        return;
    }
    /* LL moves 8 payload bytes per 16-byte store, LL128 120 per 128: what the wire carries; a
     * tree's protocol figures and a call on nc of C channels (collective_channels.c, at nc / C
     * of the links' rate) likewise: the factor of the analytic bandwidth term (rt_coll_time). */
    call.wire = ct.wire;
    int rounds = 1;
    if (job->sg->collective_steps == RT_SG_STEPS_STEPS) {
        rounds = rt_sg_collective_rounds(&call);
        call.round = rounds > 1 ? 0 : -1;
    }
    double paid = 0;
    if (rounds > 1 && job->pairs) {
        paid = run_steps(S, &call, rounds);
        rounds = 0;
    }
    for (int r = 0; r < rounds; r++) {
        if (call.round >= 0) call.round = r;
        rt_sg_flowset_clear(&S->flows);
        if (rt_sg_collective_traffic(&call, &S->flows, &why) < 0 ||
            rt_sg_flowset_finish(&S->flows) < 0)
            sim_fail(S, why ? why : "out of memory for flows");
        paid += run_flows(S);
    }
    if (ct.latency_s > paid) sg_actor_sleep_for(ct.latency_s - paid);
}

static int instance_index(rt_group gr, int base)
{
    return (base / (gr.size * gr.stride)) * gr.stride + base % gr.stride;
}

static void collective(sim *S, int op, int rank)
{
    rt_group gr = S->g->ops[op].group;
    if (!S->inst[op]) {
        S->inst[op] = calloc((size_t)(S->world / gr.size + 1), sizeof(instance));
        if (!S->inst[op]) sim_fail(S, "out of memory for group instances");
    }
    instance *in = &S->inst[op][instance_index(gr, rt_group_base(gr, rank))];
    double arrival = simgrid_get_clock();
    rt_sg_cores_wait(&S->cores, rank);
    if (in->arrived++ == 0) RT_SG_CHECK(S, in->sem = sg_sem_init(0));
    if (in->arrived < gr.size) {
        sg_sem_acquire(in->sem);
    } else {
        run_collective(S, op, rank);
        in->end = simgrid_get_clock();
        for (int k = 1; k < gr.size; k++)
            sg_sem_release(in->sem);
    }
    rt_sg_cores_resume(&S->cores, rank);
    /* From this rank's arrival: an early member waits inside the collective (as exec times it),
     * until it has its core back (with node.core_slice) */
    record(S, op, rank, arrival, fmax(in->end, simgrid_get_clock()));
    if (++in->left == gr.size) sg_sem_destroy(in->sem);
}

/* H2D copies are flows on the device's PCIe link (its latency simulated), after the launch
 * overhead. */
static void host_copy(sim *S, int op, int rank)
{
    const rt_op_cost *c = rt_graph_cost(S->g, op, S->job->rep_of[rank]);
    sg_actor_sleep_for(S->job->t->device.launch_overhead);
    rt_sg_flowset_clear(&S->flows);
    int seg = rt_platform_pcie_segment(S->job->p, rank, 0);
    if (rt_sg_flowset_add_segment(&S->flows, seg, c->bytes) < 0 ||
        rt_sg_flowset_finish(&S->flows) < 0)
        sim_fail(S, "out of memory for flows");
    (void)run_flows(S);
}

static void rank_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    rank_actor *ra = sg_actor_self_get_data();
    sim *S = ra->S;
    for (int i = 0; i < S->n_ops_of[ra->stream]; i++) {
        int op = S->ops_of[ra->stream][i];
        const rt_op *o = &S->g->ops[op];
        wait_deps(S, ra->rank, op);
        if (o->type == RT_OP_COLLECTIVE) {
            collective(S, op, ra->rank);
        } else {
            double start = simgrid_get_clock();
            if (o->kernel == RT_K_H2D)
                host_copy(S, op, ra->rank);
            else
                RT_SG_CHECK(S, rt_sg_cores_kernel(&S->cores, ra->rank,
                                                  S->job->kernel_s[at(S, op, ra->rank)]) == 0);
            record(S, op, ra->rank, start, simgrid_get_clock());
        }
        mark_done(S, ra->rank, op);
    }
    rt_sg_cores_wait(&S->cores, ra->rank); /* done for good */
}

static void sim_init(sim *S, const rt_sg_job *job)
{
    memset(S, 0, sizeof *S);
    S->job = job;
    S->g = job->g;
    S->n_ops = job->g->n_ops;
    S->world = job->g->world;
    S->hosts = calloc((size_t)job->p->n_hosts, sizeof(sg_host_t));
    S->mbox = calloc((size_t)job->p->n_hosts, sizeof(sg_mailbox_t));
    S->done = calloc((size_t)S->world * (size_t)(S->n_ops ? S->n_ops : 1), 1);
    S->cond = calloc((size_t)S->world, sizeof(sg_cond_t));
    S->mutex = calloc((size_t)S->world, sizeof(sg_mutex_t));
    S->inst = calloc((size_t)(S->n_ops ? S->n_ops : 1), sizeof(instance *));
    for (int st = 0; st < RT_STREAM_COUNT; st++)
        S->ops_of[st] = malloc(sizeof(int) * (size_t)(S->n_ops ? S->n_ops : 1));
    if (!S->hosts || !S->mbox || !S->done || !S->cond || !S->mutex || !S->inst || !S->ops_of[0] ||
        !S->ops_of[1] || !S->ops_of[2] || rt_sg_flowset_init(&S->flows, job->p, job->pairs) < 0)
        sim_fail(S, "out of memory");
    for (int op = 0; op < S->n_ops; op++) {
        int st = S->g->ops[op].stream;
        S->ops_of[st][S->n_ops_of[st]++] = op;
    }
}

/* The child frees what it allocated, so a memory checker sees it end clean (issue 12); SimGrid's
 * engine itself is never torn down once it has run. */
static void sim_free(sim *S, rank_actor *actors)
{
    /* The instances' semaphores were destroyed when their last member left. */
    for (int op = 0; S->inst && op < S->n_ops; op++)
        free(S->inst[op]);
    for (int r = 0; r < S->world; r++) {
        if (S->cond && S->cond[r]) sg_cond_destroy(S->cond[r]);
        if (S->mutex && S->mutex[r]) sg_mutex_destroy(S->mutex[r]);
    }
    free(S->hosts), free(S->mbox), free(S->done), free(S->cond), free(S->mutex), free(S->inst);
    for (int st = 0; st < RT_STREAM_COUNT; st++)
        free(S->ops_of[st]);
    rt_sg_flowset_free(&S->flows);
    rt_sg_cores_free(&S->cores, S->world);
    free(actors);
}

static void find_hosts(sim *S)
{
    char name[64];
    for (int h = 0; h < S->job->p->n_hosts; h++) {
        rt_platform_host_name(S->job->p, h, name, sizeof name);
        RT_SG_CHECK(S, S->hosts[h] = sg_host_by_name(name));
        RT_SG_CHECK(S, S->mbox[h] = sg_mailbox_by_name(name));
    }
}

static void start_ranks(sim *S, rank_actor *actors)
{
    char name[48];
    for (int r = 0; r < S->world; r++) {
        RT_SG_CHECK(S, S->cond[r] = sg_cond_init());
        RT_SG_CHECK(S, S->mutex[r] = sg_mutex_init());
        for (int st = 0; st < RT_STREAM_COUNT; st++) {
            if (!S->n_ops_of[st]) continue;
            actors[r * RT_STREAM_COUNT + st] = (rank_actor){S, r, st};
            snprintf(name, sizeof name, "rank-%d-%s", r, rt_stream_names[st]);
            sg_actor_t a = sg_actor_init(name, S->hosts[rt_platform_gpu(S->job->p, r)]);
            RT_SG_CHECK(S, a);
            sg_actor_set_data(a, &actors[r * RT_STREAM_COUNT + st]);
            sg_actor_start(a, rank_main, 0, NULL);
        }
    }
}

static int settings_argv(const rt_simgrid_settings *sg, const rt_topology *t, char buf[][96],
                         char **argv)
{
    int n = 0;
    snprintf(buf[n++], 96, "rectwin-simgrid");
    snprintf(buf[n++], 96, "--cfg=network/model:%s", rt_sg_model_names[sg->model]);
    snprintf(buf[n++], 96, "--cfg=network/TCP-gamma:%.17g", sg->tcp_gamma);
    snprintf(buf[n++], 96, "--cfg=network/crosstraffic:%d", sg->crosstraffic);
    snprintf(buf[n++], 96, "--cfg=network/weight-S:%.17g", sg->weight_s);
    snprintf(buf[n++], 96, "--cfg=network/bandwidth-factor:%.17g", sg->bandwidth_factor);
    /* SimGrid 3.32's lazy action updates let a degraded link carry more than its bandwidth
     * (a 16-GPU AlltoAll over a half-speed NIC ended at 79 % of that NIC's bytes / bandwidth;
     * experiments/whatif/faults/README.md): a faulted platform runs the full update. */
    if (t->faults.n > 0) snprintf(buf[n++], 96, "--cfg=network/optim:Full");
        /* Actors here are shallow (rank actors peak at 5 KiB, RT_SG_FLOW_STACK_KIB); small stacks
         * keep tens of thousands of them cheap. */
#ifdef __SANITIZE_ADDRESS__
    /* ASan cannot follow SimGrid's own stack switching; system threads it can. */
    snprintf(buf[n++], 96, "--cfg=contexts/factory:thread");
    snprintf(buf[n++], 96, "--cfg=contexts/stack-size:1024");
#else
    snprintf(buf[n++], 96, "--cfg=contexts/stack-size:32");
#endif
    snprintf(buf[n++], 96, "--cfg=contexts/guard-size:0");
    snprintf(buf[n++], 96, "--log=root.thresh:warning");
    for (int i = 0; i < n; i++)
        argv[i] = buf[i];
    argv[n] = NULL;
    return n;
}

int rt_sg_simulate(const rt_sg_job *job)
{
    char buf[16][96];
    char *argv[17];
    int argc = settings_argv(job->sg, job->t, buf, argv);
    sim S;
    sim_init(&S, job);
    simgrid_init(&argc, argv);
    simgrid_load_platform(job->platform_path);
    find_hosts(&S);
    int streams = 0; /* a rank's actors: one per stream that has ops */
    for (int st = 0; st < RT_STREAM_COUNT; st++)
        streams += S.n_ops_of[st] > 0;
    RT_SG_CHECK(&S, rt_sg_cores_init(&S.cores, job->t, job->p, streams) == 0);
    rank_actor *actors = calloc((size_t)S.world * RT_STREAM_COUNT, sizeof(rank_actor));
    if (!actors) sim_fail(&S, "out of memory");
    start_ranks(&S, actors);
    simgrid_run();
    job->out->sim_time = simgrid_get_clock();
    for (int r = 0; r < S.world; r++)
        for (int op = 0; op < S.n_ops; op++)
            if (!S.done[(long)r * S.n_ops + op])
                sim_fail(&S, "the simulation ended with ops not run (deadlock)");
    job->out->status = 0;
    sim_free(&S, actors);
    return 0;
}
