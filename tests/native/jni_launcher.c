/* A product launcher that embeds HotSpot through JNI_CreateJavaVM, as application servers and
 * IDEs do: its executable is not `java`, and it sets no sun.java.command.
 * Usage: jni_launcher <classpath> [JVM option...]
 * Prints READY once the VM runs, then waits for standard input to close and destroys the VM. */
#include <jni.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s <classpath> [JVM option...]\n", argv[0]);
        return 2;
    }
    int n = argc - 1;
    JavaVMOption *options = calloc((size_t)n, sizeof(JavaVMOption));
    size_t cp_len = strlen(argv[1]) + sizeof("-Djava.class.path=");
    char *cp = malloc(cp_len);
    snprintf(cp, cp_len, "-Djava.class.path=%s", argv[1]);
    options[0].optionString = cp;
    for (int i = 2; i < argc; i++) {
        options[i - 1].optionString = argv[i];
    }
    JavaVMInitArgs args;
    args.version = JNI_VERSION_1_8;
    args.nOptions = n;
    args.options = options;
    args.ignoreUnrecognized = JNI_FALSE;
    JavaVM *vm;
    JNIEnv *env;
    if (JNI_CreateJavaVM(&vm, (void **)&env, &args) != JNI_OK) {
        fprintf(stderr, "JNI_CreateJavaVM failed\n");
        return 1;
    }
    printf("READY\n");
    fflush(stdout);
    while (getchar() != EOF) {
    }
    (*vm)->DestroyJavaVM(vm);
    return 0;
}
