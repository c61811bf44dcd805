/* main.c - the capsim command: process set-up, then the command line
 * (dispatch.c). */
#include "cli.h"
#include "eval.h"

int main(int argc, char **argv)
{
	capsim_init();
	return capsim_main(argc, argv);
}
