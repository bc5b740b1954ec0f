// The Switchyard version (kept equal to project(VERSION) in the top-level CMakeLists.txt).
#pragma once

#define SWITCHYARD_VERSION "0.1.0"
