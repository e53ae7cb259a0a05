/* gen_chat_model - write the tiny test model (tools/chat_model.h) to FILE,
 * for the CLI tests of the model stages. */
#include <stdio.h>

#include "tools/chat_model.h"

int main(int argc, char **argv)
{
	if (argc != 2) {
		fputs("usage: gen_chat_model FILE\n", stderr);
		return 2;
	}
	if (chat_model_write(argv[1], 7)) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}
