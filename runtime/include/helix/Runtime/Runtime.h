//===- Runtime.h - Everything generated host code includes ------*- C++ -*-===//

#ifndef HELIX_RUNTIME_RUNTIME_H
#define HELIX_RUNTIME_RUNTIME_H

#include "helix/Runtime/Context.h"
#include "helix/Runtime/Decode.h"
#include "helix/Runtime/DecodeIO.h"
#include "helix/Runtime/Error.h"
#include "helix/Runtime/KVCache.h"
#include "helix/Runtime/Ops.h"
#include "helix/Runtime/Rope.h"
#include "helix/Runtime/Safetensors.h"
#include "helix/Runtime/Tensor.h"

#endif // HELIX_RUNTIME_RUNTIME_H
