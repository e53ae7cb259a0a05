/*
 * stage.h - the stage interface: each stage kind is a small vtable
 * (config/stage_kind.h, where the pipeline loader finds it), run on the
 * shared document state (stages/doc.h). A stage kind's file includes this
 * header.
 */
#ifndef LP_STAGES_STAGE_H
#define LP_STAGES_STAGE_H

#include "config/config.h"
#include "config/pipeline.h"
#include "config/stage_kind.h"
#include "core/buf.h"
#include "stages/doc.h"

#endif
