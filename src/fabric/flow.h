/* flow.h - flows sharing links max-min fairly (progressive filling), re-solved
 * when a flow starts or ends, only over the links and flows the change
 * touches (the connected component of the changed flow).
 *
 * A link has a capacity (bytes/s) and a multiplicity m: it stands for m
 * identical physical links. A flow has a multiplicity w (it stands for w
 * identical flows) and an optional rate cap (bytes/s, per flow). A flow of
 * multiplicity w crossing a link of multiplicity m loads each physical link
 * with w/m times its rate; unfolded networks have m = w = 1. This is how
 * symmetric ranks fold into classes without changing the arithmetic.
 *
 * The network advances in simulated time: capsim_flownet_advance moves every
 * flow's remaining bytes forward at its current rate; completion times come
 * from capsim_flownet_next_completion. The caller (the fabric) drives it from
 * the event engine. */
#ifndef CAPSIM_FLOW_H
#define CAPSIM_FLOW_H

#include <stddef.h>
#include <stdint.h>

typedef struct capsim_flownet capsim_flownet;

capsim_flownet *capsim_flownet_create(void);
void capsim_flownet_destroy(capsim_flownet *net);

/* Add a link; returns its id (0, 1, ...). cap_bytes_per_s > 0, mult >= 1. */
int capsim_flownet_add_link(capsim_flownet *net, double cap_bytes_per_s,
			    double mult);
/* Add count identical links with consecutive ids; returns the first. They
 * cost nothing until a flow crosses them: a link's state is made when it
 * is first used, so a network's cost grows with the links its flows use,
 * not with the links it has. */
int capsim_flownet_add_links(capsim_flownet *net, int count, double cap_bytes_per_s,
			     double mult);
/* Link ids handed out, and links that flows have crossed so far. */
size_t capsim_flownet_n_links(const capsim_flownet *net);
size_t capsim_flownet_links_in_use(const capsim_flownet *net);
double capsim_flownet_link_cap(const capsim_flownet *net, int link);
/* The ranges of identical links (one add_links or add_link call each), in
 * id order: how many, and range i's first id, count and capacity */
/* Whether two networks have the same links: the same ids, capacities,
 * multiplicities and incast shares (what a flow's route and rate read of
 * them); both idle. */
int capsim_flownet_same_links(const capsim_flownet *a, const capsim_flownet *b);
size_t capsim_flownet_n_ranges(const capsim_flownet *net);
void capsim_flownet_range(const capsim_flownet *net, size_t i, int *base, int *count,
			  double *cap_bytes_per_s);
/* the identical physical links a link stands for (its add_link's mult) */
double capsim_flownet_link_mult(const capsim_flownet *net, int link);
/* the largest multiplicity of any link (1: every link stands for one) */
double capsim_flownet_max_mult(const capsim_flownet *net);
/* the share of its capacity a link delivers under incast (1: none;
 * capsim_flownet_set_incast_links) */
double capsim_flownet_link_incast(const capsim_flownet *net, int link);

/* Start a flow of bytes over the given links (a path; a link may appear
 * once), with multiplicity mult >= 1 and a rate cap (0: none). Rates of the
 * touched component are re-solved. Returns the flow id (>= 0). */
int capsim_flownet_start(capsim_flownet *net, const int *links, size_t n_links,
			 double bytes, double mult, double cap_bytes_per_s);

/* The same, with the flow's origin: an id (the NIC it entered the fabric
 * through, say) that links with an incast efficiency use to tell many-to-one
 * congestion from one sender's many flows; -1 for none. */
int capsim_flownet_start_from(capsim_flownet *net, const int *links,
			      size_t n_links, double bytes, double mult,
			      double cap_bytes_per_s, int origin);

/* Congestion: while flows from two or more origins share a link of
 * [base, base + count), it delivers only eff (0 < eff <= 1) of its capacity
 * (lossy Ethernet under incast). Default 1. */
void capsim_flownet_set_incast_links(capsim_flownet *net, int base, int count, double eff);

/* Remove a flow (finished or cancelled); rates of its former component are
 * re-solved. Returns 0, or -1 if id is not active. */
int capsim_flownet_stop(capsim_flownet *net, int flow);

/* Batch changes: between capsim_flownet_hold(net, 1) and
 * capsim_flownet_hold(net, 0), starts and stops only record what they touch;
 * the release re-solves the union once (flows finishing together). */
void capsim_flownet_hold(capsim_flownet *net, int on);

/* Active flows on a link (for adaptive routing's choice of the least
 * loaded uplink). */
size_t capsim_flownet_link_flows(const capsim_flownet *net, int link);

/* Move simulated time forward by dt seconds: every active flow's remaining
 * bytes fall by rate x dt (never below 0). Rates do not change. */
void capsim_flownet_advance(capsim_flownet *net, double dt_s);

/* The active flow that finishes first at current rates, and in how many
 * seconds; returns -1 when no flow is active (or none has a rate). Ties go
 * to the lowest id, so runs are deterministic. */
int capsim_flownet_next_completion(const capsim_flownet *net, double *dt_s);

double capsim_flownet_rate(const capsim_flownet *net, int flow);     /* bytes/s, per flow */
double capsim_flownet_remaining(const capsim_flownet *net, int flow); /* bytes */
size_t capsim_flownet_active(const capsim_flownet *net);

/* Load of one physical link of this link's class (bytes/s) and its
 * utilisation (load / cap). */
double capsim_flownet_link_load(const capsim_flownet *net, int link);

/* Totals for benchmarks: re-solves done, and flows visited by them. */
uint64_t capsim_flownet_solves(const capsim_flownet *net);
uint64_t capsim_flownet_solve_visits(const capsim_flownet *net);

/* Bytes ever carried by one physical link of this class (for tests of what
 * crosses a link) */
double capsim_flownet_link_bytes(const capsim_flownet *net, int link);

#endif
