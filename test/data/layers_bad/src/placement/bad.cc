// A core file that reaches into the HTTP layer: check_layers.cmake must refuse it.
#include "gpusched/http/server.h"
