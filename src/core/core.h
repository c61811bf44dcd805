/* core.h - capsim's discrete-event engine. It knows nothing of GPUs, links or
 * transformers: entities register handlers for kinds of event, and the engine
 * delivers events in a total, deterministic order.
 *
 * Time is simulated in integer nanoseconds. Events are ordered by (time,
 * priority, insertion sequence): two events at the same time are delivered in
 * ascending priority, then in the order they were scheduled, so the same
 * inputs give bit-identical runs on any machine.
 *
 * Ownership: the engine owns every event; a handler gets a pointer valid only
 * during the call. An event id stays valid until the event is delivered or
 * cancelled; cancelling a delivered or cancelled id is refused, not undefined
 * (ids carry a generation).
 *
 * The queue is a calendar queue of compact keys (queue_cal.h: O(1) expected
 * per event, O(1) cancellation); the 4-ary heap of queue.h, which it
 * replaced, pops the same entries and stays for comparison.
 */
#ifndef CAPSIM_CORE_H
#define CAPSIM_CORE_H

#include <stddef.h>
#include <stdint.h>

typedef int64_t capsim_time_ns;

#define CAPSIM_TIME_NEVER INT64_MAX

/* An event id: 0 is never a valid id. */
typedef uint64_t capsim_event_id;

typedef struct capsim_sim capsim_sim;

/* What a handler receives. payload is copied into the event at scheduling
 * time (up to CAPSIM_EVENT_PAYLOAD bytes), so callers need not keep it. */
#define CAPSIM_EVENT_PAYLOAD 32

typedef struct capsim_event {
	capsim_time_ns t;
	uint8_t prio;
	uint16_t kind;
	capsim_event_id id;
	unsigned char payload[CAPSIM_EVENT_PAYLOAD];
} capsim_event;

typedef void (*capsim_handler)(capsim_sim *sim, const capsim_event *ev,
			       void *ctx);

/* Create an engine; NULL only if memory runs out. */
capsim_sim *capsim_sim_create(void);
void capsim_sim_destroy(capsim_sim *sim);

/* Register a handler for a new kind of event; returns the kind (0, 1, ...),
 * or -1 past 65535 kinds. ctx is passed back to the handler untouched. */
int capsim_sim_add_kind(capsim_sim *sim, capsim_handler h, void *ctx);

/* Schedule an event of kind at absolute time t (now <= t < CAPSIM_TIME_NEVER)
 * with priority prio (0 first). payload may be NULL (zeros) and len <=
 * CAPSIM_EVENT_PAYLOAD. Returns the id, or 0 when t is out of range, the kind
 * is unknown or len too large. */
capsim_event_id capsim_sim_schedule(capsim_sim *sim, capsim_time_ns t,
				    uint8_t prio, int kind, const void *payload,
				    size_t len);

/* Cancel a pending event. Returns 0, or -1 when id is not pending. */
int capsim_sim_cancel(capsim_sim *sim, capsim_event_id id);

/* Deliver events in order until the queue is empty, or the next event lies
 * after until (inclusive; CAPSIM_TIME_NEVER: no limit), or capsim_sim_stop is
 * called from a handler. now stays at the last delivered event's time. A
 * call from inside a handler delivers nothing and returns 0. Returns the
 * number of events delivered by this call. */
uint64_t capsim_sim_run(capsim_sim *sim, capsim_time_ns until);

/* Ask a running capsim_sim_run to return after the current handler. */
void capsim_sim_stop(capsim_sim *sim);

capsim_time_ns capsim_sim_now(const capsim_sim *sim);
size_t capsim_sim_pending(const capsim_sim *sim);
uint64_t capsim_sim_delivered(const capsim_sim *sim);

/* Time of the next pending event, or CAPSIM_TIME_NEVER. */
capsim_time_ns capsim_sim_next_time(const capsim_sim *sim);

/* Convert seconds to nanoseconds, rounding to nearest; saturates at
 * CAPSIM_TIME_NEVER - 1 for huge or non-finite input. */
capsim_time_ns capsim_ns_from_s(double s);

#endif
