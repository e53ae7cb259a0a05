/* page.c - the web page (page.h). */
#include "serve/page.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/sha256.h"
#include "serve/http.h"
#include "serve/metrics.h"

/* The style, the script and the body, each as it goes into the page (the
 * CSP hashes the first two exactly). The labels are filled in by the
 * script from its table, English or Chinese. */
static const char style[] =
	":root{color-scheme:light dark;--accent:#2a6df4;--mark:#ffe58a;--line:#8884}\n"
	"*{box-sizing:border-box}\n"
	"body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:960px;padding:1rem}\n"
	"header h1{font-size:1.4rem;margin:.2rem 0}\n"
	"header p{margin:0;opacity:.75}\n"
	"section{border:1px solid var(--line);border-radius:8px;padding:.8rem 1rem;margin:.8rem 0}\n"
	"h2{font-size:1.05rem;margin:0 0 .5rem}\n"
	"#drop{border:2px dashed var(--line);border-radius:8px;padding:1.2rem;text-align:center}\n"
	"#drop.over{border-color:var(--accent)}\n"
	"label{display:block;margin:.4rem 0 .1rem;font-weight:600}\n"
	"input[type=text],input[type=password],select{width:100%;padding:.4rem;font:inherit}\n"
	"button{margin-top:.6rem;padding:.45rem 1.2rem;font:inherit;cursor:pointer}\n"
	"progress{width:100%;height:1rem}\n"
	"#events{font:12px/1.35 ui-monospace,monospace;max-height:9rem;overflow:auto;margin:.4rem 0 0;padding-left:1.4rem}\n"
	"#answer{white-space:pre-wrap;margin:0}\n"
	".passage{font:13px/1.5 ui-monospace,monospace;white-space:pre-wrap;border-left:3px solid var(--accent);padding:.3rem .6rem;margin:.5rem 0}\n"
	"mark{background:var(--mark);color:#000}\n"
	"mark strong{text-decoration:underline}\n"
	".error{color:#c22}\n"
	".muted{opacity:.7}\n";
static const char script[] =
	"(function(){\n"
	"\"use strict\";\n"
	"var L={\n"
	" en:{title:\"lpipe serve\",sub:\"Long documents, one memory budget.\",doc:\"Document\",\n"
	"  drop:\"Drop a document here, or choose one:\",pipeline:\"Pipeline\",question:\"Question\",\n"
	"  token:\"Token (only if the server asks for one)\",ask:\"Ask\",cancel:\"Cancel\",\n"
	"  progress:\"Progress\",answer:\"Answer\",passages:\"Cited passages, in context\",\n"
	"  uploaded:\"Uploaded\",bytes:\"bytes\",queued:\"queued\",running:\"running\",done:\"done\",\n"
	"  failed:\"failed\",cancelled:\"cancelled\",nodoc:\"Choose a document first.\",\n"
	"  none:\"No passage was cited.\",eta:\"ETA\",chunk:\"chunk\"},\n"
	" zh:{title:\"lpipe 服务\",sub:\"长文档，一个内存预算。\",doc:\"文档\",\n"
	"  drop:\"把文档拖到这里，或选择一个：\",pipeline:\"流水线\",question:\"问题\",\n"
	"  token:\"令牌（仅当服务器要求时）\",ask:\"提问\",cancel:\"取消\",\n"
	"  progress:\"进度\",answer:\"回答\",passages:\"引用的段落（含上下文）\",\n"
	"  uploaded:\"已上传\",bytes:\"字节\",queued:\"排队中\",running:\"运行中\",done:\"完成\",\n"
	"  failed:\"失败\",cancelled:\"已取消\",nodoc:\"请先选择文档。\",\n"
	"  none:\"没有引用段落。\",eta:\"预计剩余\",chunk:\"块\"}};\n"
	"var lang=((navigator.languages&&navigator.languages[0])||navigator.language||\"en\")\n"
	" .toLowerCase().indexOf(\"zh\")===0?\"zh\":\"en\";\n"
	"var T=L[lang];\n"
	"document.documentElement.lang=lang===\"zh\"?\"zh-CN\":\"en\";\n"
	"document.title=T.title;\n"
	"Array.prototype.forEach.call(document.querySelectorAll(\"[data-l]\"),function(e){\n"
	" e.textContent=T[e.getAttribute(\"data-l\")];});\n"
	"function $(id){return document.getElementById(id);}\n"
	"var doc=null,bytes=null,run=null;\n"
	"function headers(extra){var h=extra||{},t=$(\"token\").value.trim();\n"
	" if(t)h.Authorization=\"Bearer \"+t;return h;}\n"
	"function say(id,text,cls){var e=$(id);e.textContent=text;e.className=cls||\"\";}\n"
	"function fail(e){say(\"status\",String(e&&e.message||e),\"error\");$(\"ask\").disabled=false;}\n"
	"function api(method,path,body,type){\n"
	" var o={method:method,headers:headers(type?{\"Content-Type\":type}:{})};\n"
	" if(body!==undefined)o.body=body;\n"
	" return fetch(path,o).then(function(r){return r.json().then(function(j){\n"
	"  if(!r.ok)throw new Error(r.status+\": \"+(j.error?j.error.message:r.statusText));return j;});});}\n"
	"function upload(file){\n"
	" say(\"docinfo\",file.name+\" …\",\"muted\");\n"
	" file.arrayBuffer().then(function(buf){bytes=new Uint8Array(buf);\n"
	"  return api(\"POST\",\"/v1/documents?name=\"+encodeURIComponent(file.name),buf,\"application/octet-stream\");})\n"
	" .then(function(j){doc=j.id;say(\"docinfo\",T.uploaded+\": \"+file.name+\", \"+j.bytes+\" \"+T.bytes);\n"
	"  $(\"docinfo\").setAttribute(\"data-id\",j.id);})\n"
	" .catch(function(e){say(\"docinfo\",String(e.message||e),\"error\");});}\n"
	"var drop=$(\"drop\");\n"
	"drop.addEventListener(\"dragover\",function(e){e.preventDefault();drop.classList.add(\"over\");});\n"
	"drop.addEventListener(\"dragleave\",function(){drop.classList.remove(\"over\");});\n"
	"drop.addEventListener(\"drop\",function(e){e.preventDefault();drop.classList.remove(\"over\");\n"
	" if(e.dataTransfer.files.length)upload(e.dataTransfer.files[0]);});\n"
	"$(\"file\").addEventListener(\"change\",function(){if(this.files.length)upload(this.files[0]);});\n"
	"function pipelines(){api(\"GET\",\"/v1/pipelines\").then(function(list){var s=$(\"pipeline\");\n"
	" s.textContent=\"\";list.forEach(function(p){var o=document.createElement(\"option\");\n"
	" o.value=o.textContent=p.name;if(p.name===\"qa\")o.selected=true;s.appendChild(o);});})\n"
	" .catch(fail);}\n"
	"$(\"token\").addEventListener(\"change\",pipelines);\n"
	"pipelines();\n"
	"function line(text){var li=document.createElement(\"li\");li.textContent=text;\n"
	" var ol=$(\"events\");ol.appendChild(li);while(ol.children.length>50)ol.removeChild(ol.firstChild);\n"
	" ol.scrollTop=ol.scrollHeight;}\n"
	"function progress(p){var bar=$(\"bar\");\n"
	" if(p.total>0){bar.max=p.total;bar.value=p.done;}else bar.removeAttribute(\"value\");\n"
	" var t=p.stage+(p.total?\" \"+p.done+\"/\"+p.total+\" \"+p.unit:\"\")+\n"
	"  (p.tokens_per_s>0?\", \"+p.tokens_per_s.toFixed(1)+\" tok/s\":\"\")+\n"
	"  (p.eta_s!==null&&p.eta_s!==undefined?\", \"+T.eta+\" \"+Math.round(p.eta_s)+\" s\":\"\");\n"
	" say(\"status\",T.running+\": \"+t);line(t);}\n"
	"function events(id){\n"
	" return fetch(\"/v1/runs/\"+id+\"/events\",{headers:headers()}).then(function(r){\n"
	"  var rd=r.body.getReader(),dec=new TextDecoder(),buf=\"\";\n"
	"  function pump(){return rd.read().then(function(x){\n"
	"   if(x.done)return;buf+=dec.decode(x.value,{stream:true});var i;\n"
	"   while((i=buf.indexOf(\"\\n\\n\"))>=0){var block=buf.slice(0,i);buf=buf.slice(i+2);\n"
	"    var ev=null,data=null;block.split(\"\\n\").forEach(function(l){\n"
	"     if(l.indexOf(\"event: \")===0)ev=l.slice(7);else if(l.indexOf(\"data: \")===0)data=l.slice(6);});\n"
	"    if(!ev||!data)continue;var d=JSON.parse(data);\n"
	"    if(ev===\"progress\")progress(d);\n"
	"    else{say(\"status\",T[d.state]||d.state);line(T[d.state]||d.state);\n"
	"     if(d.state===\"done\"||d.state===\"failed\"||d.state===\"cancelled\")return finish(id);}}\n"
	"   return pump();});}\n"
	"  return pump();});}\n"
	"function finish(id){$(\"ask\").disabled=false;$(\"cancel\").disabled=true;\n"
	" return api(\"GET\",\"/v1/runs/\"+id).then(show);}\n"
	"function text(a,b){return new TextDecoder().decode(bytes.subarray(Math.max(0,a),Math.min(bytes.length,b)));}\n"
	"function show(r){var bar=$(\"bar\");bar.max=1;bar.value=1;\n"
	" if(r.state!==\"done\"){say(\"answer\",(T[r.state]||r.state)+\": \"+(r.error||\"\"),\"error\");return;}\n"
	" var res=r.result,ans=res.answer||res.summary||res.result||\"\";\n"
	" say(\"answer\",ans);say(\"status\",T.done+\" (\"+r.run_s.toFixed(2)+\" s)\");\n"
	" var m=/Quote: \"([\\s\\S]*?)\"\\s*(\\n|$)/.exec(ans),quote=m?m[1]:ans.split(\"\\n\\n\")[0].trim();\n"
	" var box=$(\"passages\");box.textContent=\"\";\n"
	" var ids=(res.cited&&res.cited.length?res.cited:(res.selected||[]).slice(0,3));\n"
	" if(!ids.length||!bytes){var p=document.createElement(\"p\");p.className=\"muted\";\n"
	"  p.textContent=T.none;box.appendChild(p);return;}\n"
	" ids.forEach(function(cid){var c=res.chunks[cid];if(!c)return;\n"
	"  var div=document.createElement(\"div\");div.className=\"passage\";\n"
	"  div.setAttribute(\"data-chunk\",cid);\n"
	"  var h=document.createElement(\"div\");h.className=\"muted\";h.textContent=T.chunk+\" \"+cid;\n"
	"  div.appendChild(h);\n"
	"  div.appendChild(document.createTextNode(\"…\"+text(c.offset-240,c.offset)));\n"
	"  var mk=document.createElement(\"mark\");var body=text(c.offset,c.offset+c.length);\n"
	"  var at=quote?body.indexOf(quote):-1;\n"
	"  if(at>=0){mk.appendChild(document.createTextNode(body.slice(0,at)));\n"
	"   var st=document.createElement(\"strong\");st.className=\"quote\";st.textContent=quote;\n"
	"   mk.appendChild(st);mk.appendChild(document.createTextNode(body.slice(at+quote.length)));}\n"
	"  else mk.textContent=body;\n"
	"  div.appendChild(mk);\n"
	"  div.appendChild(document.createTextNode(text(c.offset+c.length,c.offset+c.length+240)+\"…\"));\n"
	"  box.appendChild(div);});}\n"
	"$(\"ask\").addEventListener(\"click\",function(){\n"
	" if(!doc){say(\"status\",T.nodoc,\"error\");return;}\n"
	" $(\"ask\").disabled=true;$(\"events\").textContent=\"\";say(\"answer\",\"\");$(\"passages\").textContent=\"\";\n"
	" var body=JSON.stringify({pipeline:$(\"pipeline\").value,document:doc,question:$(\"question\").value});\n"
	" api(\"POST\",\"/v1/runs\",body,\"application/json\").then(function(j){run=j.id;\n"
	"  $(\"cancel\").disabled=false;say(\"status\",T.queued);line(T.queued);return events(j.id);})\n"
	" .catch(fail);});\n"
	"$(\"cancel\").addEventListener(\"click\",function(){if(run)api(\"DELETE\",\"/v1/runs/\"+run).catch(fail);});\n"
	"})();\n";
static const char body[] =
	"<header><h1 data-l=\"title\"></h1><p data-l=\"sub\"></p></header>\n"
	"<main>\n"
	"<section id=\"s-doc\"><h2 data-l=\"doc\"></h2>\n"
	"<div id=\"drop\"><span data-l=\"drop\"></span> <input type=\"file\" id=\"file\"></div>\n"
	"<p id=\"docinfo\" class=\"muted\"></p></section>\n"
	"<section id=\"s-ask\">\n"
	"<label for=\"pipeline\" data-l=\"pipeline\"></label><select id=\"pipeline\"></select>\n"
	"<label for=\"question\" data-l=\"question\"></label><input type=\"text\" id=\"question\" autocomplete=\"off\">\n"
	"<label for=\"token\" data-l=\"token\"></label><input type=\"password\" id=\"token\" autocomplete=\"off\">\n"
	"<button id=\"ask\" type=\"button\" data-l=\"ask\"></button> <button id=\"cancel\" type=\"button\" data-l=\"cancel\" disabled></button>\n"
	"</section>\n"
	"<section id=\"s-progress\"><h2 data-l=\"progress\"></h2><progress id=\"bar\" max=\"1\" value=\"0\"></progress>\n"
	"<p id=\"status\" class=\"muted\"></p><ol id=\"events\"></ol></section>\n"
	"<section id=\"s-answer\"><h2 data-l=\"answer\"></h2><p id=\"answer\"></p>\n"
	"<h2 data-l=\"passages\"></h2><div id=\"passages\"></div></section>\n"
	"</main>\n";

static char page[65536];
static char csp[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void base64(const unsigned char *in, size_t n, char *out)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t j = 0;

	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) |
			     (i + 2 < n ? in[i + 2] : 0);
		out[j++] = a[v >> 18 & 63];
		out[j++] = a[v >> 12 & 63];
		out[j++] = i + 1 < n ? a[v >> 6 & 63] : '=';
		out[j++] = i + 2 < n ? a[v & 63] : '=';
	}
	out[j] = 0;
}

static void hash64(const char *text, char out[48])
{
	struct lp_sha256 c;
	unsigned char digest[32];

	lp_sha256_init(&c);
	lp_sha256_update(&c, text, strlen(text));
	lp_sha256_final(&c, digest);
	base64(digest, 32, out);
}

static void build(void)
{
	char hs[48], hj[48];

	hash64(style, hs);
	hash64(script, hj);
	snprintf(csp, sizeof(csp),
		 "default-src 'none'; script-src 'sha256-%s'; style-src 'sha256-%s'; "
		 "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; "
		 "frame-ancestors 'none'", hj, hs);
	snprintf(page, sizeof(page),
		 "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		 "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
		 "<title>lpipe</title><style>%s</style></head><body>%s<script>%s</script>"
		 "</body></html>\n", style, body, script);
}

enum MHD_Result lp_serve_page_reply(struct MHD_Connection *conn)
{
	struct MHD_Response *r;

	pthread_once(&once, build);
	r = MHD_create_response_from_buffer(strlen(page), page, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "text/html; charset=utf-8");
	MHD_add_response_header(r, "Content-Security-Policy", csp);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	return lp_serve_queue(conn, 200, r);
}
