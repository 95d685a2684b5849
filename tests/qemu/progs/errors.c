#include "mmt.h"
int main(void) { return mmt_done(); }
