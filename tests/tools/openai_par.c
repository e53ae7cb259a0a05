/*
 * openai_par.c - one OpenAI client shared by N threads, each sending its
 * own request at once (tests/cli/openai.sh runs it against the stub).
 *
 *   openai_par URL N [CONCURRENCY RETRIES]
 *
 * CONCURRENCY caps the client's requests in flight (default 0: no cap),
 * RETRIES its further attempts (default 0). Prints "T: REPLY" per thread in thread order, or "T: error: MESSAGE";
 * exits 0 when every request succeeded, 1 otherwise, 2 on bad usage.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "model/remote/openai.h"

#define MAX_THREADS 64

struct job {
	struct lp_openai *client;
	char question[32];
	char *reply;
	struct lp_diag d;
	enum lp_status st;
};

static void *run(void *arg)
{
	struct job *j = arg;
	struct lp_chat_msg m = { "user", j->question };

	lp_diag_init(&j->d);
	j->st = lp_openai_chat(j->client, &m, 1, NULL, 8, &j->reply, NULL, NULL, &j->d);
	return NULL;
}

int main(int argc, char **argv)
{
	struct lp_openai_params p = lp_openai_default_params();
	static struct job jobs[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	struct lp_openai *c;
	struct lp_diag d;
	int n, bad = 0;

	if ((argc != 3 && argc != 5) || (n = atoi(argv[2])) < 1 || n > MAX_THREADS) {
		fprintf(stderr, "usage: openai_par URL N (1..%d) [CONCURRENCY RETRIES]\n",
			MAX_THREADS);
		return 2;
	}
	p.url = argv[1];
	p.model = "stub-model";
	p.api_key_env = getenv("STUB_KEY") ? "STUB_KEY" : NULL;
	p.concurrency = argc == 5 ? atoi(argv[3]) : 0;
	p.retries = argc == 5 ? atoi(argv[4]) : 0;
	lp_diag_init(&d);
	if (lp_openai_new(&p, &c, &d)) {
		lp_diag_print(&d, stderr);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		jobs[i].client = c;
		snprintf(jobs[i].question, sizeof(jobs[i].question), "question %d", i);
		if (pthread_create(&tid[i], NULL, run, &jobs[i])) {
			fprintf(stderr, "openai_par: unable to start thread %d\n", i);
			return 1;
		}
	}
	for (int i = 0; i < n; i++) {
		pthread_join(tid[i], NULL);
		if (jobs[i].st) {
			printf("%d: error: %s\n", i, jobs[i].d.msg);
			bad = 1;
		} else {
			printf("%d: %s\n", i, jobs[i].reply);
		}
		lp_mem_free(jobs[i].reply);
	}
	lp_openai_free(c);
	return bad;
}
