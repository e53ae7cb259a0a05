# report: text, markdown, JSON and HTML output of a run
liblpipe_la_SOURCES += \
	src/report/report.c src/report/json.c src/report/html.c src/report/report.h
