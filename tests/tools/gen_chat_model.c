/* gen_chat_model - write the tiny test model (tools/chat_model.h) to FILE,
 * for the CLI tests of the model stages; with LAYERS, that many layers
 * instead of 2. */
#include <stdio.h>
#include <stdlib.h>

#include "tools/chat_model.h"

int main(int argc, char **argv)
{
	long layers = argc == 3 ? strtol(argv[2], NULL, 10) : 2;

	if ((argc != 2 && argc != 3) || layers < 1 || layers > 1000) {
		fputs("usage: gen_chat_model FILE [LAYERS]\n", stderr);
		return 2;
	}
	if (chat_model_write_layers(argv[1], 7, (uint32_t)layers)) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}
