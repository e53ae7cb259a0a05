#include "stages/prompts.h"

#include "text/lang.h"

static const struct lp_prompts english = {
	.answer = {
		"You answer questions about a document using only the passages the user gives. "
		"Each passage starts with its id, such as [chunk 3]. Answer briefly and cite the "
		"ids "
		"of the passages you used, like [chunk 3]. If the passages do not hold the answer, "
		"say so.",
		"You find the sentence in the passages that answers the user's question. Copy it "
		"exactly, word for word, and give the id of its passage.",
		"Copy the sentence that answers the question, in this form:\n"
		"Quote: \"<the sentence>\" [chunk N]",
		"Quote: \"",
		"You answer the user's question from the text the user gives, in a few words, "
		"using "
		"the text's own words.",
		"Passages:\n", "Question: ", "Text: ", "Summary of the document:\n",
		{ "the model's quote was found in the source",
		  "the model's quote was found in the source on a retry",
		  "the model's quote was not found in the source; this is the source's best match "
		  "for the question",
		  "this is the source's best match for the question" },
		"; the model's answer did not stand on it, so it is the answer",
		"the answer is the name of the entry this sentence describes",
		"the answer is the name this sentence gives",
		"The document does not say.",
		"no passage of the document names %.*s; the passages nearest to the question are "
		"cited",
		"the sentences nearest to the question do not name %.*s; those passages are cited",
		"the question asks for a quantity and the sentences nearest to it hold none of its "
		"kind; those passages are cited",
		"the document never uses the words '%.*s' and '%.*s' of the question; the passages "
		"nearest to it are cited",
		"the model's answer did not stand on the nearest sentence, and that sentence holds "
		"too little of the question to be the answer; it and the passages nearest to the "
		"question are cited",
		"no sentence of the document holds enough of the request to be the passage asked "
		"for; the passages nearest to it are cited",
		"the document's own words: the passage that holds the sentence best matching the "
		"request",
	},
	.summarize = {
		"You are a helpful assistant who writes short, factual notes that keep the names, "
		"commands and key terms of the text.",
		"You keep a running summary of a long document. Update the summary so far with the "
		"new text the user gives. Keep names, numbers, commands and key terms. Reply with "
		"the updated summary only.",
		"Text:\n",
		"Update the summary with this new text:\n\n",
		"\n\nWrite a summary of the text above in %zu sentences.",
		"\n\nList the %zu most important facts of the text above as short bullet points, "
		"one "
		"per line, each starting with \"- \". Use the words of the text.",
		"Sentence:\n",
		"\n\nShorten the sentence above to at most %zu words. Keep its words.",
		"The summary must keep these facts:",
	},
};

static const struct lp_prompts chinese = {
	.answer = {
		"你只根据用户给出的段落回答关于文档的问题。每个段落以编号开头，例如 [chunk 3]。"
		"用中文简短回答，并写出所用段落的编号，例如 [chunk 3]。段落中没有答案时，请直说。",
		"你从用户给出的段落中找出回答问题的那一句话，一字不差地抄写出来，并写出它所在段落的编号。",
		"按此格式抄写回答问题的那句话：\n引文：“<那句话>” [chunk N]",
		"引文：“",
		"你根据用户给出的文字，用中文简短回答问题，尽量使用原文的词语。",
		"段落：\n", "问题：", "文字：", "文档摘要：\n",
		{ "模型给出的引文在原文中找到", "模型给出的引文在重试后于原文中找到",
		  "模型给出的引文不在原文中；这是原文中与问题最匹配的句子", "这是原文中与问题最匹配的句子" },
		"；模型的回答不以它为依据，因此以它作答",
		"答案是这句话所描述条目的名称",
		"答案是这句话给出的名称",
		"文档中没有说明。",
		"文档中没有出现 %.*s；列出的是与问题最接近的段落",
		"与问题最接近的句子都没有提到 %.*s；列出的是这些段落",
		"问题问的是数量，与问题最接近的句子中没有数字；列出的是这些段落",
		"文档中从未出现问题里的 “%.*s” 和 “%.*s”；列出的是与问题最接近的段落",
		"模型的回答不以最接近的句子为依据，而这句话与问题相合太少，不能作为答案；列出的是它和与问题最接近的段落",
		"文档中没有一句话与所要的内容足够相合；列出的是与之最接近的段落",
		"文档原文：包含与所要内容最匹配的句子的那一段",
	},
	.summarize = {
		"你是一个乐于助人的助手，用原文的词语写简短、准确的要点，保留名称、命令和关键术语。",
		"你为一篇长文档维护一份摘要。根据用户给出的新文本更新目前的摘要，保留名称、数字、命令和"
		"关键术语。只回复更新后的摘要。",
		"文本：\n",
		"用这段新文本更新摘要：\n\n",
		"\n\n用中文写上文的摘要，共%zu句。",
		"\n\n用中文列出上文最重要的%zu个事实，每行一条，以\"- \"开头。使用原文的词语。",
		"句子：\n",
		"\n\n用中文把上面的句子缩短到%zu个字以内，保留原文的词语。",
		"摘要必须保留这些事实：",
	},
};

const struct lp_prompts *lp_prompts_for(int han)
{
	return han ? &chinese : &english;
}

const struct lp_prompts *lp_prompts_of(const char *text, size_t len)
{
	return lp_prompts_for(text && lp_lang_script(text, len) == LP_SCRIPT_HAN);
}
