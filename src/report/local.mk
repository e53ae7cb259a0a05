# report: text, markdown, JSON and HTML output of a run
liblpipe_la_SOURCES += \
	src/report/report.c src/report/json.c src/report/html.c src/report/report.h

# report: the table, CSV and SVG of `lpipe probe` (model/probe.h measures)
liblpipe_la_SOURCES += src/report/probe_out.c src/report/probe.h
