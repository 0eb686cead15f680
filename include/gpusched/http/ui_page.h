// File: ui_page.h
//
// GET /ui: the cluster's GPUs at a glance, a page served by gpusched itself. The page
// (src/http/ui_page.html) is compiled into the binary (CMake embeds it); nothing is fetched from
// elsewhere, at build or at run time. It reads /debug/inventory and /metrics every 3 s and draws
// one row per node (virtualized: only the rows in view are in the DOM) with a cell per GPU, the
// cluster's totals, filters, and the details of a node or a GPU.
#pragma once

#include <string_view>

namespace gpusched::http {

// The page's HTML (with its CSS and script inline).
std::string_view UiPage();

}  // namespace gpusched::http
