/* gen_tiny_model.c - `gen_tiny_model PATH`: write the tiny model of
 * tiny_model.h for the CLI tests of probe and plan. */
#include <stdio.h>

#include "tiny_model.h"

int main(int argc, char **argv)
{
	struct tiny_spec s = tiny_default_spec();

	if (argc != 2) {
		fputs("usage: gen_tiny_model PATH\n", stderr);
		return 2;
	}
	if (tiny_model_write(argv[1], &s, 7)) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}
