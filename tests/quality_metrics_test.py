"""Unit tests of scripts/quality_metrics.py on hand-made strings.

Run by tests/cli/quality.sh (make check); alone:
    python3 tests/quality_metrics_test.py
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import quality_metrics as qm  # noqa: E402


class Answer(unittest.TestCase):
    def test_plain_and_variant(self):
        self.assertTrue(qm.answer_correct("The default is 127.", "127"))
        self.assertTrue(qm.answer_correct("Use  ‘journalctl  -b’.", "journalctl -b"))
        self.assertTrue(qm.answer_correct("run readarray", "mapfile", ["readarray"]))
        self.assertFalse(qm.answer_correct("run mapfile2", "mapfile"))

    def test_boundaries(self):
        self.assertFalse(qm.answer_correct("status 1270", "127"))
        self.assertFalse(qm.answer_correct("EPOCHSECONDS holds it", "SECONDS"))
        self.assertTrue(qm.answer_correct("It is $SECONDS.", "SECONDS"))
        self.assertFalse(qm.answer_correct("see /var/log/dpkg.log", "/var/log/", ["/var/log"]))
        self.assertTrue(qm.answer_correct("logs are in /var/log.", "/var/log"))
        self.assertTrue(qm.answer_correct("logs: /var/log/ (all)", "/var/log/"))

    def test_case(self):
        # lower-case references fold case, capitals must match exactly
        self.assertTrue(qm.answer_correct("HEXADECIMAL", "hexadecimal"))
        self.assertFalse(qm.answer_correct("use dpkg -s", "dpkg -S"))
        self.assertFalse(qm.answer_correct("the seconds since start", "SECONDS"))

    def test_nfkc_and_dashes(self):
        self.assertTrue(qm.answer_correct("ｊｏｕｒｎａｌｃｔｌ －ｂ", "journalctl -b"))
        self.assertTrue(qm.answer_correct("update-alternatives \u2014config editor",
                                          "update-alternatives -config editor"))

    def test_chinese_without_word_boundaries(self):
        self.assertTrue(qm.answer_correct("使用journalctl -b命令", "journalctl -b"))
        self.assertTrue(qm.answer_correct("保存在/etc/hostname中", "/etc/hostname"))


class Source(unittest.TestCase):
    def test_wrapped_lines(self):
        src = 'script "/etc/cron.daily/\n    apt" to support'
        self.assertTrue(qm.in_source(src, "/etc/cron.daily/apt"))
        self.assertTrue(qm.in_source("一个\n    句子里的换行", "句子里的"))
        self.assertTrue(qm.in_source("一个句\n    子里", "句子"))
        self.assertFalse(qm.in_source("nothing here", "/etc/hosts"))


class Verbatim(unittest.TestCase):
    SRC = ("Rsync is famous for its delta-\ntransfer algorithm, which re-\n"
           "duces the amount of data sent.  It can copy locally.\n\n8. Termination.\n")

    def test_rewrapped_and_broken_words_pass(self):
        self.assertTrue(qm.verbatim("Rsync is famous for its delta-transfer algorithm, "
                                    "which reduces the amount of data sent. It can\ncopy "
                                    "locally.", self.SRC))
        self.assertTrue(qm.verbatim("8. Termination.", self.SRC))

    def test_own_words_fail(self):
        self.assertFalse(qm.verbatim("Rsync is famous for its algorithm.", self.SRC))
        # one sentence of the model's own makes the whole reply not verbatim
        self.assertFalse(qm.verbatim("It can copy locally. It is fast.", self.SRC))
        self.assertFalse(qm.verbatim("", self.SRC))


class Citation(unittest.TestCase):
    def test_ids(self):
        a = "Use 127 [chunk 3].\n\nSources: [chunk 3], [chunk 7]"
        self.assertEqual(qm.cited_ids(a), [3, 7])
        self.assertTrue(qm.inline_cited(a))
        self.assertFalse(qm.inline_cited("127\n\nSources: [chunk 1], [chunk 2]"))

    def test_score(self):
        share, anyok = qm.citation_score(["returns a status of 127", "other"], ["127"])
        self.assertEqual((share, anyok), (0.5, True))
        self.assertEqual(qm.citation_score([], ["127"]), (0.0, False))


class Grounding(unittest.TestCase):
    SRC = ("Bash reads ~/.bashrc when interactive. The limit is 4096 bytes. "
           "Set HISTFILE_SIZE or use --norc. The shell_opts variable is read.")

    def test_facts(self):
        kinds = dict((s, k) for k, s in qm.facts('Use --norc and -x, read /etc/profile, '
                                                 'see 4096, HIST_SIZE, fooBar, a.b and "x y"'))
        self.assertEqual(kinds.get("--norc"), "option")
        self.assertEqual(kinds.get("-x"), "option")
        self.assertEqual(kinds.get("/etc/profile"), "path")
        self.assertEqual(kinds.get("4096"), "number")
        self.assertEqual(kinds.get("HIST_SIZE"), "identifier")
        self.assertEqual(kinds.get("fooBar"), "identifier")
        self.assertEqual(kinds.get("a.b"), "identifier")
        self.assertEqual(kinds.get("x y"), "quoted")
        # an apostrophe inside a word opens no quoted string
        kinds = dict((s, k) for k, s in qm.facts("the kernel's driver stops it. For example, 'ce'"))
        self.assertEqual(kinds.get("ce"), "quoted")
        self.assertEqual(len(kinds), 1)

    def test_fact_grounding(self):
        g, n, bad = qm.fact_grounding("It reads ~/.bashrc up to 4096 bytes, or 8192 with --fast.",
                                      self.SRC)
        self.assertEqual((g, n), (2, 4))
        self.assertEqual(sorted(bad), ["--fast", "8192"])

    def test_sentence_support(self):
        out = "Bash reads the bashrc file when interactive. Penguins migrate south every winter."
        self.assertEqual(qm.sentence_support(out, self.SRC), (1, 2))
        zh = "系统主机名保存在文件里。大象喜欢吃香蕉和苹果。"
        self.assertEqual(qm.sentence_support(zh, "内核维护系统主机名。主机名保存在文件里。"), (1, 2))


class MetaLanguageKeys(unittest.TestCase):
    def test_meta(self):
        for s in ["The text describes the shell.", "In summary, bash is old.",
                  "This document covers jobs.", "The summary is in 2 sentences.",
                  "本文介绍了系统。", "总之，系统很好。"]:
            self.assertTrue(qm.meta_talk(s), s)
        self.assertFalse(qm.meta_talk("Bash reads ~/.bashrc at start. 内核维护主机名。"))

    def test_answer_meta(self):
        quoted = ("The document does not say.\n\nNearest: \"This document describes GNU "
                  "tar.\" [chunk 1]\n\nSources: [chunk 1]")
        self.assertFalse(qm.answer_meta(quoted))
        self.assertTrue(qm.meta_talk(quoted))
        own = "The text describes tar.\n\nQuote: \"GNU tar is an archiving program.\" [chunk 1]"
        self.assertTrue(qm.answer_meta(own))

    def test_language(self):
        self.assertEqual(qm.script_of("Use journalctl -b to show the log."), "en")
        self.assertEqual(qm.script_of("使用 journalctl -b 命令显示日志。"), "zh")
        self.assertIsNone(qm.script_of("journalctl -b"))
        self.assertFalse(qm.language_match("The kernel keeps the host name.", "zh"))
        self.assertTrue(qm.language_match("/etc/hostname", "zh"))

    def test_keyphrases(self):
        phrases = [["login shell"], ["~/.bashrc", ".bashrc"], ["fg"], ["内核模块"]]
        kept, tot, miss = qm.keyphrase_survival("A Login Shell reads .bashrc; 内核\n模块", phrases)
        self.assertEqual((kept, tot), (3, 4))
        self.assertEqual(miss, ["fg"])
        # "fg" must not be found inside another word
        self.assertEqual(qm.keyphrase_survival("configure", [["fg"]])[0], 0)

    def test_words_and_verification_line(self):
        self.assertEqual(qm.words("Two words 内核"), 4)
        self.assertEqual(qm.strip_verification(
            "text\n\nverification: 3/4 keyphrases survived (75%), 2 words\n"), "text")


class AbstainConcise(unittest.TestCase):
    def test_answer_paragraph(self):
        a = "60 seconds\n\nQuote: \"The default is 60 seconds.\"\nCheck: found\nSources: [chunk 2]"
        self.assertEqual(qm.answer_paragraph(a), "60 seconds")
        self.assertEqual(qm.answer_paragraph("~\n\nCheck: this is the source's best match"), "~")
        self.assertEqual(qm.answer_paragraph("ssh -p\n引文：“指定端口”"), "ssh -p")
        self.assertEqual(qm.answer_paragraph(
            "The document does not say.\n\nNearest: \"It is 60.\"\nCheck: weak"),
            "The document does not say.")

    def test_abstains(self):
        for s in ["The document does not say.", "The document doesn't mention SHLVL.",
                  "This is not mentioned in the document.", "The text does not specify a fee.",
                  "There is no information about it in the document.",
                  "文档中没有说明。", "文档没有提到这一点。", "原文中并未提及。", "文中没有说明默认值。"]:
            self.assertTrue(qm.abstains(s), s)
        for s in ["The default is 60 seconds.", "The document is in /usr/share/doc.",
                  "--dry-run does not make changes.", "默认值是 60 秒。", "没有默认值。"]:
            self.assertFalse(qm.abstains(s), s)

    def test_concise(self):
        short = "The default suffix is ~ when no --backup-dir is given."
        self.assertTrue(qm.concise_correct(short, "~"))
        dump = ("This option allows you to override the default backup suffix used with the "
                "--backup (-b) option. The default suffix is a ~ if no --backup-dir was "
                "specified, otherwise it is an empty string, and you can set it to anything.")
        self.assertTrue(qm.answer_correct(dump, "~"))
        self.assertFalse(qm.concise_correct(dump, "~"))       # right but 40+ words
        self.assertFalse(qm.concise_correct("The default backup suffix is -b.", "~"))  # wrong
        self.assertTrue(qm.concise("默" * 60))
        self.assertFalse(qm.concise("默" * 61))
        self.assertFalse(qm.concise("word " * 20 + "默" * 30))  # 20/30 + 30/60 > 1

    def test_confidently_wrong(self):
        self.assertTrue(qm.confidently_wrong("The builtin -S sets the mask.", False))
        self.assertFalse(qm.confidently_wrong("The document does not say.", False))
        self.assertFalse(qm.confidently_wrong("umask", True))


class StandAlone(unittest.TestCase):
    def reasons(self, text):
        return [why for _, why in qm.standalone_failures(text)]

    def test_failures(self):
        cases = [
            ("GNU GENERAL PUBLIC LICENSE: Free Software Foundation, use the GNU General "
             "Public License for most of our software.", "glued heading"),
            ("3.2 Systemd init The systemd process starts first.", "glued heading"),
            ("Bash Startup Files: Bash reads several files.", "glued heading"),
            ("第 4 章 认证和访问控制 本章介绍认证。", "glued heading"),
            ("The following packages for the graphic data conversion, editing, and "
             "organization tools caught my eyes.", "lead-in"),
            ("The file contains the commands in the following format.", "lead-in"),
            ("The options are as follows:", "lead-in"),
            ("安装下列软件包。", "lead-in"),
            ("It copies files to a remote host.", "pronoun"),
            ("These are the files that bash reads.", "pronoun"),
            ("它用于登录远程主机。", "pronoun"),
            ("The options of rsync.", "fragment"),
            ("Hard links, symbolic links, and devices.", "fragment"),
        ]
        for text, why in cases:
            self.assertEqual(self.reasons(text), [why], text)

    def test_passes(self):
        for text in ["rsync is a fast file-copying tool. It can copy to a remote host.",
                     "This option deletes extraneous files.",
                     "Rsync supports the following options: --delete, --archive and --verbose.",
                     "The file exists.", "ssh 用于登录远程主机。它替换 rlogin 和 rsh。",
                     "Bash reads ~/.bashrc when the shell is interactive.",
                     "The GNU General Public License is a free, copyleft license.",
                     "- --delete removes files\n- --dry-run changes nothing"]:
            self.assertEqual(qm.standalone_failures(text), [], text)

    def test_paragraph_start(self):
        # after a heading line, a pronoun has nothing to point back to
        self.assertEqual(self.reasons("Rsync copies files.\n\nOptions\nIt deletes files."),
                         ["pronoun"])
        self.assertEqual(self.reasons("rsync copies files.\n\nThey are compared first."),
                         ["pronoun"])


if __name__ == "__main__":
    unittest.main(verbosity=1)
