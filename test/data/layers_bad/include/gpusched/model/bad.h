// The model including boost: check_layers.cmake must refuse it.
#pragma once
#include <boost/asio.hpp>
