// File: test_pch.cc
//
// Empty: the translation unit the test programs' precompiled headers are built with
// (test/CMakeLists.txt, gpusched_test_pch).
