# report: text, markdown and JSON output of a run
liblpipe_la_SOURCES += \
	src/report/report.c src/report/json.c src/report/report.h
