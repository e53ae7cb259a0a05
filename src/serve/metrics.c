/* metrics.c - counters and the Prometheus exposition (metrics.h). */
#include "serve/metrics.h"

#include <pthread.h>
#include <string.h>

#include "core/mem.h"

static const char *const reject_names[LP_REJ_N] = { "queue_full", "too_large", "bad_request",
						    "unauthorized", "not_found", "draining" };
/* Upper bounds of the latency buckets, seconds (then +Inf). */
static const double bounds[] = { 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300 };
#define N_BOUNDS (sizeof(bounds) / sizeof(bounds[0]))
#define N_STATUS 600

struct histogram {
	unsigned long long buckets[N_BOUNDS + 1];
	unsigned long long count;
	double sum;
};

static struct {
	pthread_mutex_t lock;
	unsigned long long rejects[LP_REJ_N];
	unsigned long long status[N_STATUS];
	struct histogram wait, total[3]; /* done, failed, cancelled */
} m = { .lock = PTHREAD_MUTEX_INITIALIZER };

static const char *const end_states[3] = { "done", "failed", "cancelled" };

void lp_serve_metrics_init(void)
{
	pthread_mutex_lock(&m.lock);
	memset(m.rejects, 0, sizeof(m.rejects));
	memset(m.status, 0, sizeof(m.status));
	memset(&m.wait, 0, sizeof(m.wait));
	memset(m.total, 0, sizeof(m.total));
	pthread_mutex_unlock(&m.lock);
}

void lp_serve_metrics_reject(enum lp_serve_reject why)
{
	pthread_mutex_lock(&m.lock);
	m.rejects[why]++;
	pthread_mutex_unlock(&m.lock);
}

void lp_serve_metrics_status(unsigned status)
{
	pthread_mutex_lock(&m.lock);
	if (status < N_STATUS)
		m.status[status]++;
	pthread_mutex_unlock(&m.lock);
}

static void observe(struct histogram *h, double s)
{
	size_t i = 0;

	while (i < N_BOUNDS && s > bounds[i])
		i++;
	h->buckets[i]++;
	h->count++;
	h->sum += s;
}

void lp_serve_metrics_wait(double wait_s)
{
	pthread_mutex_lock(&m.lock);
	observe(&m.wait, wait_s);
	pthread_mutex_unlock(&m.lock);
}

void lp_serve_metrics_end(const char *state, double total_s)
{
	pthread_mutex_lock(&m.lock);
	for (int i = 0; i < 3; i++)
		if (!strcmp(state, end_states[i]))
			observe(&m.total[i], total_s);
	pthread_mutex_unlock(&m.lock);
}

static void write_histogram(struct lp_buf *o, const char *name, const char *label,
			    const struct histogram *h)
{
	unsigned long long cum = 0;
	const char *sep = *label ? "," : "";

	for (size_t i = 0; i < N_BOUNDS; i++) {
		cum += h->buckets[i];
		lp_buf_addf(o, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, label, sep, bounds[i], cum);
	}
	cum += h->buckets[N_BOUNDS];
	lp_buf_addf(o, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, label, sep, cum);
	lp_buf_addf(o, "%s_sum%s%s%s %.6f\n", name, *label ? "{" : "", label, *label ? "}" : "",
		    h->sum);
	lp_buf_addf(o, "%s_count%s%s%s %llu\n", name, *label ? "{" : "", label,
		    *label ? "}" : "", h->count);
}

static void write_gauges(const struct lp_serve_gauges *g, struct lp_buf *o)
{
	lp_buf_adds(o, "# HELP lpipe_serve_queue_depth Runs waiting for admission.\n"
		       "# TYPE lpipe_serve_queue_depth gauge\n");
	lp_buf_addf(o, "lpipe_serve_queue_depth %zu\n", g->queued);
	lp_buf_addf(o, "# HELP lpipe_serve_queue_capacity Runs the queue holds at most.\n"
		       "# TYPE lpipe_serve_queue_capacity gauge\nlpipe_serve_queue_capacity %zu\n",
		    g->queue_cap);
	lp_buf_adds(o, "# HELP lpipe_serve_runs Runs known to the server, by state.\n"
		       "# TYPE lpipe_serve_runs gauge\n");
	lp_buf_addf(o, "lpipe_serve_runs{state=\"queued\"} %zu\n", g->queued);
	lp_buf_addf(o, "lpipe_serve_runs{state=\"running\"} %zu\n", g->running);
	lp_buf_addf(o, "lpipe_serve_runs{state=\"done\"} %zu\n", g->done);
	lp_buf_addf(o, "lpipe_serve_runs{state=\"failed\"} %zu\n", g->failed);
	lp_buf_addf(o, "lpipe_serve_runs{state=\"cancelled\"} %zu\n", g->cancelled);
	lp_buf_addf(o, "# HELP lpipe_serve_jobs Runs that may run at once.\n"
		       "# TYPE lpipe_serve_jobs gauge\nlpipe_serve_jobs %zu\n", g->jobs);
	lp_buf_addf(o, "# HELP lpipe_serve_planned_bytes Planned peak of the admitted runs.\n"
		       "# TYPE lpipe_serve_planned_bytes gauge\nlpipe_serve_planned_bytes %zu\n",
		    g->planned_bytes);
	lp_buf_addf(o, "# HELP lpipe_serve_models Models kept loaded for the next runs.\n"
		       "# TYPE lpipe_serve_models gauge\nlpipe_serve_models %zu\n", g->models);
	lp_buf_addf(o, "# HELP lpipe_serve_model_planned_bytes Planned bytes of the kept models.\n"
		       "# TYPE lpipe_serve_model_planned_bytes gauge\n"
		       "lpipe_serve_model_planned_bytes %zu\n", g->model_bytes);
	lp_buf_addf(o, "# HELP lpipe_serve_models_loaded_total Models loaded so far.\n"
		       "# TYPE lpipe_serve_models_loaded_total counter\n"
		       "lpipe_serve_models_loaded_total %zu\n", g->models_loaded);
	lp_buf_addf(o, "# HELP lpipe_serve_shared_bytes Parsed documents and indexes kept for "
		       "the next runs.\n# TYPE lpipe_serve_shared_bytes gauge\n"
		       "lpipe_serve_shared_bytes %zu\n", g->shared_bytes);
	lp_buf_addf(o, "# HELP lpipe_serve_shared_entries Parsed documents and indexes kept.\n"
		       "# TYPE lpipe_serve_shared_entries gauge\nlpipe_serve_shared_entries %zu\n",
		    g->shared_entries);
	lp_buf_addf(o, "# HELP lpipe_serve_shared_total Parsed documents and indexes asked "
		       "for, by whether they were kept.\n# TYPE lpipe_serve_shared_total counter\n"
		       "lpipe_serve_shared_total{found=\"yes\"} %llu\n"
		       "lpipe_serve_shared_total{found=\"no\"} %llu\n",
		    g->shared_hits, g->shared_misses);
	lp_buf_addf(o, "# HELP lpipe_serve_documents Documents in the cache.\n"
		       "# TYPE lpipe_serve_documents gauge\nlpipe_serve_documents %zu\n",
		    g->doc_count);
	lp_buf_addf(o, "# HELP lpipe_serve_document_bytes Bytes of the cached documents.\n"
		       "# TYPE lpipe_serve_document_bytes gauge\nlpipe_serve_document_bytes %zu\n",
		    g->doc_bytes);
	lp_buf_addf(o, "# HELP lpipe_serve_document_cache_bytes The document cache's cap.\n"
		       "# TYPE lpipe_serve_document_cache_bytes gauge\n"
		       "lpipe_serve_document_cache_bytes %zu\n", g->doc_cap);
}

static void write_memory(struct lp_buf *o)
{
	lp_buf_adds(o, "# HELP lpipe_tracked_bytes Tracked memory now, by tag.\n"
		       "# TYPE lpipe_tracked_bytes gauge\n");
	for (int t = 0; t < LP_MEM_NTAGS; t++)
		lp_buf_addf(o, "lpipe_tracked_bytes{tag=\"%s\"} %zu\n", lp_mem_tag_name(t),
			    lp_mem_current(t));
	lp_buf_addf(o, "# HELP lpipe_tracked_total_bytes Tracked host memory now.\n"
		       "# TYPE lpipe_tracked_total_bytes gauge\nlpipe_tracked_total_bytes %zu\n",
		    lp_mem_current_total());
	lp_buf_addf(o, "# HELP lpipe_tracked_peak_bytes Peak of tracked host memory.\n"
		       "# TYPE lpipe_tracked_peak_bytes gauge\nlpipe_tracked_peak_bytes %zu\n",
		    lp_mem_peak_total());
	lp_buf_addf(o, "# HELP lpipe_budget_bytes The memory budget (0: none).\n"
		       "# TYPE lpipe_budget_bytes gauge\nlpipe_budget_bytes %zu\n",
		    lp_mem_budget());
	lp_buf_addf(o, "# HELP lpipe_resident_bytes Resident set size of the process.\n"
		       "# TYPE lpipe_resident_bytes gauge\nlpipe_resident_bytes %zu\n",
		    lp_mem_current_rss());
	lp_buf_addf(o, "# HELP lpipe_resident_peak_bytes Peak resident set size.\n"
		       "# TYPE lpipe_resident_peak_bytes gauge\nlpipe_resident_peak_bytes %zu\n",
		    lp_mem_peak_rss());
	lp_buf_addf(o, "# HELP lpipe_allocation_failures_total Tracked allocations refused.\n"
		       "# TYPE lpipe_allocation_failures_total counter\n"
		       "lpipe_allocation_failures_total %lu\n", lp_mem_failures());
}

enum lp_status lp_serve_metrics_write(const struct lp_serve_gauges *g, struct lp_buf *o)
{
	char label[32];

	write_gauges(g, o);
	write_memory(o);
	pthread_mutex_lock(&m.lock);
	lp_buf_adds(o, "# HELP lpipe_serve_rejections_total Requests refused, by cause.\n"
		       "# TYPE lpipe_serve_rejections_total counter\n");
	for (int i = 0; i < LP_REJ_N; i++)
		lp_buf_addf(o, "lpipe_serve_rejections_total{cause=\"%s\"} %llu\n",
			    reject_names[i], m.rejects[i]);
	lp_buf_adds(o, "# HELP lpipe_serve_responses_total HTTP responses, by status.\n"
		       "# TYPE lpipe_serve_responses_total counter\n");
	for (int i = 0; i < N_STATUS; i++)
		if (m.status[i])
			lp_buf_addf(o, "lpipe_serve_responses_total{code=\"%d\"} %llu\n", i,
				    m.status[i]);
	lp_buf_adds(o, "# HELP lpipe_serve_queue_wait_seconds Time runs waited for admission.\n"
		       "# TYPE lpipe_serve_queue_wait_seconds histogram\n");
	write_histogram(o, "lpipe_serve_queue_wait_seconds", "", &m.wait);
	lp_buf_adds(o, "# HELP lpipe_serve_run_seconds Time from submission to a run's end.\n"
		       "# TYPE lpipe_serve_run_seconds histogram\n");
	for (int i = 0; i < 3; i++) {
		snprintf(label, sizeof(label), "state=\"%s\"", end_states[i]);
		write_histogram(o, "lpipe_serve_run_seconds", label, &m.total[i]);
	}
	pthread_mutex_unlock(&m.lock);
	return lp_buf_adds(o, "# EOF\n");
}
