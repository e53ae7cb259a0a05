# backend: sources and Check suite (see Makefile.am)
