// The embedded OpenCL C sources (generated from kernels/*.cl at build time).
#pragma once

#include "cl_common.h"
#include "cl_copy.h"
#include "cl_matmul.h"
#include "cl_pointwise.h"
#include "cl_quantize.h"
#include "cl_reduce.h"
#include "cl_softmax.h"
