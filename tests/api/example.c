/* example.c - run a pipeline on a document, as `lpipe run` does. */
#include <stdio.h>
#include <lpipe.h>

int main(int argc, char **argv)
{
	lpipe_pipeline *p = lpipe_pipeline_new();
	lpipe_result *r = NULL;
	const char *report;
	int rc;

	if (argc < 3 || argc > 4 || !p) {
		fprintf(stderr, "usage: example PIPELINE DOC [QUESTION]\n");
		return LPIPE_USAGE;
	}
	if (argc == 4)
		lpipe_pipeline_set_var(p, "question", argv[3]);
	rc = lpipe_pipeline_load_file(p, argv[1]);
	if (rc == LPIPE_OK)
		rc = lpipe_run_file(p, NULL, argv[2], &r);
	if (r && (report = lpipe_result_report(r, NULL)) != NULL) {
		fputs(report, stdout);
		if (lpipe_result_passed(r) >= 0)
			fprintf(stderr, "passed: %d, survival: %.2f\n",
				lpipe_result_passed(r), lpipe_result_survival(r));
	} else {
		fprintf(stderr, "example: %s\n", lpipe_errmsg());
		rc = rc ? rc : LPIPE_INTERNAL;
	}
	lpipe_result_free(r);
	lpipe_pipeline_free(p);
	return rc;
}
