.\" lpipe-probe-plan.frag - the probe and plan commands, to paste into
.\" lpipe.1: the SYNOPSIS lines first, then the COMMANDS entries.
.\" ---- SYNOPSIS ----
.B lpipe probe
.RB [ \-\-csv
.IR file ]
.RB [ \-\-svg
.IR file ]
.RB [ \-\-min
.IR n ]
.RB [ \-\-max
.IR n ]
.RB [ \-\-decode
.IR n ]
.RB [ \-\-kv\-type
.IR type ]
.RB [ \-\-threads
.IR n ]
.RB [ \-\-mem\-budget
.IR size ]
.I model
.br
.B lpipe plan
.I model
.B \-\-mem\-budget
.I size
.RB [ \-\-kv\-type
.IR auto | f32 | f16 | q8_0 ]
.RB [ \-\-threads
.IR n ]
.br
.\" ---- COMMANDS ----
.TP
.BI "probe " "\fR[\fPoptions\fR]\fP model"
Measure memory and speed against the context length.
The model is loaded (phase
.BR load ),
then for context lengths doubling from
.B \-\-min
(default 128) to
.B \-\-max
(default: the model's training context; the maximum is always measured)
a context of that length is created, a synthetic prompt that leaves room for
.B \-\-decode
tokens (default 16) is prefilled (phase
.BR prefill ),
and those tokens are decoded one by one (phase
.BR decode ),
so the last one fills the context.
Each phase starts from fresh peaks and gives one row: seconds, tokens per
second, the tracked peak of the weights, KV cache, scratch and logits, the
tracked total, the resident set size at its end, and the total that
.B lpipe plan
predicts for that length.
A length the budget
.RB ( \-\-mem\-budget )
refuses is marked
.B over
and the probe goes on to the next one.
The table is printed on standard output, followed by two lines:
.B growth:
says whether tracked memory grows linearly with the length (the KV cache)
or faster (attention scratch), from a least-squares fit of
\fIa\fP + \fIb\fP\(mu\fIn\fP + \fIc\fP\(mu\fIn\fP\(ha2
(super-linear when the quadratic term is at least 5% of the growth at the
longest length), with the bytes per token and the ratio of the slopes of
the last two steps (1 linear, 2 quadratic);
.B budget:
gives the first length over the budget, measured, or extrapolated from the
fit when every length fitted.
.RS
.TP
.BI \-\-csv " file"
Write the rows as CSV, replacing
.I file
atomically.
The columns are
.BR n_ctx " (tokens), " phase " (load, prefill or decode), " ok
(1, or 0 when over budget),
.BR seconds ", " tokens_per_s ", " weights_bytes ", " kv_bytes ,
.BR scratch_bytes ", " logits_bytes
(tracked peak of each tag during the phase),
.B tracked_peak_bytes
(peak of the tracked total),
.B rss_bytes
(resident set size at the end of the phase) and
.B predicted_bytes
(the planner's total).
.TP
.BI \-\-svg " file"
Write a line chart of memory (MiB) against length (log2 scale): the tracked
peak of each phase (solid), its resident size (dotted), the prediction
(dashed) and the budget.
.TP
.BI \-\-kv\-type " type"
KV cache type:
.BR f32 ", " f16 " (default) or " q8_0 .
.TP
.BI \-\-threads " n"
Worker threads (default: the online CPUs).
.TP
.BI \-\-mem\-budget " size"
Cap tracked memory, e.g.
.BR 256MiB ;
the weights must fit it.
.RE
.IP
Exit status 0 (also when some lengths are over budget), 2 for bad options,
3 for an unreadable or invalid model, 4 when the weights alone exceed the
budget.
.TP
.BI "plan " "model " "\-\-mem\-budget " "size \fR[\fPoptions\fR]\fP"
Turn a memory budget into the settings of a pipeline.
From the model's hyper-parameters the planner predicts the weights (the
mapped file), the KV cache (2 \(mu layers \(mu KV heads \(mu head size \(mu
bytes of the KV type, per token), the activation scratch and the logits,
with the same formula the engine allocates by.
It prints, as a YAML fragment to paste into a pipeline
.RB ( model.context ", " model.kv_type ", " memory.budget
and a
.B split
stage):
the largest context (a multiple of 256, or a power of two below 256, at
most the training context) whose predicted total fits the budget less a
safety margin of 10% (at least 4 MiB) left for the tokenizer, the document
and indexes;
the chunk size (the context less 96 tokens of prompt template and 256 of
generated text, at most half the context, in steps of 16);
an overlap of about 12% of the chunk; the KV type; and, as comments, the
prediction term by term and the prefill batch (512 tokens; a smaller one,
which prefills more slowly, only when it buys at least a quarter more
context or nothing fits otherwise).
.RS
.TP
.BI \-\-kv\-type " type"
.B auto
(default) keeps
.B f16
unless
.B q8_0
gives a longer context;
.BR f32 ", " f16 " or " q8_0
fix the type.
.TP
.BI \-\-threads " n"
Threads the scratch is sized for (default: the online CPUs).
.RE
.IP
Exit status 0, 2 for bad options, 3 for an unreadable or invalid model, 4
when even the smallest context does not fit; the message then says what is
needed, e.g. \(lqthe weights alone need 94.60 MiB, more than the budget
64.00 MiB\(rq.
