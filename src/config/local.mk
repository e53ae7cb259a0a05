# config: sources and Check suite (see Makefile.am)
