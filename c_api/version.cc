// Version queries.
#include "shapepoly/shapepoly.h"

extern "C" {

const char* shp_version_string(void) { return SHP_VERSION_STRING; }

int32_t shp_abi_version(void) { return SHP_ABI_VERSION; }

}  // extern "C"
