/* The C API from an installed helix, in C: registers the dialects and the
 * passes, imports a config to model IR (helixRun), parses it, runs
 * helix-search-layouts through mlirPassManagerRunOnOp, plans the model
 * (helixPlan) and checks that a bad option comes back as the CLI's one-line
 * error without ending the process. usage: capi-consumer CONFIG.json */
#include "helix-c/Dialects.h"
#include "helix-c/Driver.h"
#include "helix-c/Passes.h"

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

static void expect(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "capi-consumer: FAILED: %s\n", what);
    ++failures;
  }
}

/* Appends a string ref's text to a buffer (the printing callback). */
typedef struct {
  char *data;
  size_t size;
} Buffer;

static void append(MlirStringRef s, void *userData) {
  Buffer *b = (Buffer *)userData;
  char *grown = realloc(b->data, b->size + s.length + 1);
  if (!grown)
    return;
  b->data = grown;
  memcpy(b->data + b->size, s.data, s.length);
  b->size += s.length;
  b->data[b->size] = '\0';
}

static char *readFile(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)n + 1);
  if (text && fread(text, 1, (size_t)n, f) != (size_t)n) {
    free(text);
    text = NULL;
  }
  if (text)
    text[n] = '\0';
  fclose(f);
  return text;
}

/* Whether a string ref contains `needle`. */
static int contains(MlirStringRef s, const char *needle) {
  size_t n = strlen(needle);
  for (size_t i = 0; i + n <= s.length; ++i)
    if (memcmp(s.data + i, needle, n) == 0)
      return 1;
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: capi-consumer CONFIG.json\n");
    return 2;
  }
  char *config = readFile(argv[1]);
  if (!config) {
    fprintf(stderr, "capi-consumer: cannot read %s\n", argv[1]);
    return 2;
  }
  MlirStringRef configRef = mlirStringRefCreateFromCString(config);

  /* 1. The config as model IR (helix import -). */
  const char *importArgs[] = {"import", "-"};
  HelixResult imported = helixRun(2, importArgs, configRef);
  expect(helixResultSucceeded(imported), "helix import - succeeds");
  MlirStringRef ir = helixResultGetProduct(imported);
  expect(contains(ir, "func.func @decode_step"),
         "import gives the decode step");

  /* 2. Parse it with the helix dialects registered. */
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  helixRegisterAllDialects(registry);
  MlirContext ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirContextGetOrLoadDialect(ctx, mlirStringRefCreateFromCString("helix"));
  MlirDialectHandle helix = mlirGetDialectHandle__helix__();
  expect(mlirStringRefEqual(mlirDialectHandleGetNamespace(helix),
                            mlirStringRefCreateFromCString("helix")),
         "the dialect handle's namespace is helix");
  MlirModule module = mlirModuleCreateParse(ctx, ir);
  expect(!mlirModuleIsNull(module), "the model IR parses");

  /* 3. helix-search-layouts through the pass manager. */
  helixRegisterPasses();
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  Buffer parseErrors = {NULL, 0};
  MlirLogicalResult parsed = mlirParsePassPipeline(
      opm,
      mlirStringRefCreateFromCString(
          "builtin.module(helix-search-layouts{gpus=8 batch=4 "
          "context=65536})"),
      append, &parseErrors);
  expect(mlirLogicalResultIsSuccess(parsed), "the pipeline parses");
  if (parseErrors.data)
    fprintf(stderr, "%s\n", parseErrors.data);
  if (!mlirModuleIsNull(module) && mlirLogicalResultIsSuccess(parsed)) {
    MlirLogicalResult ran =
        mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module));
    expect(mlirLogicalResultIsSuccess(ran), "helix-search-layouts runs");
    Buffer printed = {NULL, 0};
    mlirOperationPrint(mlirModuleGetOperation(module), append, &printed);
    expect(printed.data &&
               strstr(printed.data,
                      "helix.plan = #helix.plan<strategy = helix") != NULL,
           "the module carries a Helix plan");
    expect(printed.data &&
               strstr(printed.data, "#helix.layout<gpus = 8") != NULL,
           "its ops carry 8-GPU layouts");
    free(printed.data);
  }
  free(parseErrors.data);

  /* 4. Plan the model: the JSON helix plan --json writes. */
  const char *planArgs[] = {"--hardware", "h200",       "--dtype",
                            "fp8",        "--max-gpus", "16"};
  HelixResult plan = helixPlan(configRef, 6, planArgs);
  expect(helixResultSucceeded(plan), "helixPlan succeeds");
  MlirStringRef json = helixResultGetProduct(plan);
  expect(json.length > 0 && json.data[0] == '{', "the plan is JSON");
  expect(contains(json, "\"frontiers\"") && contains(json, "\"gains\""),
         "the plan has its fronts and gains");
  expect(contains(helixResultGetOutput(plan), "Helix plan:"),
         "the summary is kept as output");

  /* 5. A bad option: the CLI's error line, and the process goes on. */
  const char *badArgs[] = {"--hardware", "no-such-gpu"};
  HelixResult bad = helixPlan(configRef, 2, badArgs);
  expect(helixResultGetExitCode(bad) == 1, "a bad --hardware fails");
  MlirStringRef err = helixResultGetError(bad);
  expect(contains(err, "helix plan: error: ") && contains(err, "no-such-gpu"),
         "the error is the CLI's line naming the value");

  helixResultDestroy(bad);
  helixResultDestroy(plan);
  helixResultDestroy(imported);
  mlirPassManagerDestroy(pm);
  if (!mlirModuleIsNull(module))
    mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  free(config);
  if (failures)
    return 1;
  printf("capi-consumer: planned %s through the C API\n", argv[1]);
  return 0;
}
