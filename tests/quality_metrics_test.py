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


if __name__ == "__main__":
    unittest.main(verbosity=1)
