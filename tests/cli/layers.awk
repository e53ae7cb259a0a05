# layers.awk - the include graph of src/ against src/LAYERS (see there).
# Reads LAYERS first, then lines "src/PATH:LINE:#include "INC"" (grep -n);
# prints one "ok - ..." or "FAIL - ..." line per folder and per leak, and
# exits 1 when any include breaks a rule.
function folder_of(path,    d) {
	d = path
	while (d != "") {
		if (d in deps)
			return d
		if (d !~ /\//)
			break
		sub(/\/[^\/]*$/, "", d)
	}
	return ""
}
function top_of(path) { sub(/\/.*/, "", path); return path }
FNR == NR {
	sub(/#.*/, "")
	if ($0 !~ /:/)
		next
	name = $0; sub(/:.*/, "", name); gsub(/[ \t]/, "", name)
	rest = $0; sub(/^[^:]*:/, "", rest)
	if (name ~ /\.[ch]$/) {
		extra[name] = " " rest " "
		next
	}
	if (name in deps)
		printf "FAIL - src/LAYERS lists %s twice\n", name
	n = split(rest, a, /[ \t]+/)
	deps[name] = " "
	for (i = 1; i <= n; i++) {
		if (a[i] == "")
			continue
		if (!(a[i] in deps) && a[i] != "kernels") {
			printf "FAIL - src/LAYERS: %s may include %s, which is not listed above it\n",
			       name, a[i]
			bad++
		}
		deps[name] = deps[name] a[i] " "
	}
	order[++n_order] = name
	next
}
{
	file = $0; sub(/^src\//, "", file); sub(/:.*/, "", file)
	inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
	own = folder_of(file)
	if (own == "" || file !~ /\//) {
		if (!(file in unlisted))
			printf "FAIL - src/%s: its folder is not in src/LAYERS\n", file
		unlisted[file] = 1
		bad++
		next
	}
	seen[own] = 1
	if (inc !~ /\//)
		next
	dir = inc; sub(/\/[^\/]*$/, "", dir)
	to = folder_of(dir)
	if (to == "")
		to = top_of(dir)
	if (to == own || index(deps[own], " " to " "))
		next
	if (file in extra && index(extra[file], " " to " ")) {
		leak[file] = leak[file] " " inc
		next
	}
	printf "FAIL - src/%s includes %s: %s may not include %s\n", file, inc, own, to
	broken[own]++
	bad++
}
END {
	for (i = 1; i <= n_order; i++) {
		f = order[i]
		if (!(f in seen)) {
			printf "FAIL - src/LAYERS lists %s, which holds no source\n", f
			bad++
		} else if (!broken[f])
		{
			d = deps[f]
			sub(/ $/, "", d)
			printf "ok - src/%s/ includes only itself%s%s\n", f, d == "" ? "" : " and", d
		}
	}
	for (f in extra)
		if (f in leak)
			printf "ok - src/%s: known leak,%s\n", f, leak[f]
		else {
			printf "FAIL - src/LAYERS: the leak of %s is gone; remove its line\n", f
			bad++
		}
	exit bad > 0
}
