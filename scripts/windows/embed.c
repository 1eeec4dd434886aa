/* A launcher that is not java.exe, for the Windows tests under Wine: it loads jvm.dll itself and
 * creates the JVM with JNI_CreateJavaVM (as procrun's prunsrv.exe and IDE launchers do), then
 * runs <main class>.main(<args>) on the same thread. It sets no sun.java.command, as such
 * launchers often do not: the JVM's main class is then unknown to jps and to inspect.
 *
 * Usage: embed.exe <path of jvm.dll> <class path> <main class> [args...]
 * Built by scripts/windows/integration.py with mingw against the Windows JDK's include/. */
#include <windows.h>
#include <stdio.h>
#include <jni.h>

typedef jint(JNICALL *CreateJavaVM)(JavaVM **, void **, void *);

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: embed.exe <jvm.dll> <class path> <main class> [args...]\n");
        return 2;
    }
    HMODULE jvm_dll = LoadLibraryA(argv[1]);
    if (!jvm_dll) {
        fprintf(stderr, "embed: cannot load %s (error %lu)\n", argv[1], GetLastError());
        return 1;
    }
    CreateJavaVM create = (CreateJavaVM)(void *)GetProcAddress(jvm_dll, "JNI_CreateJavaVM");
    if (!create) {
        fprintf(stderr, "embed: no JNI_CreateJavaVM in %s\n", argv[1]);
        return 1;
    }
    char class_path[4096];
    snprintf(class_path, sizeof class_path, "-Djava.class.path=%s", argv[2]);
    JavaVMOption options[1];
    options[0].optionString = class_path;
    options[0].extraInfo = NULL;
    JavaVMInitArgs init;
    init.version = JNI_VERSION_10;
    init.nOptions = 1;
    init.options = options;
    init.ignoreUnrecognized = JNI_FALSE;
    JavaVM *vm;
    JNIEnv *env;
    if (create(&vm, (void **)&env, &init) != JNI_OK) {
        fprintf(stderr, "embed: JNI_CreateJavaVM failed\n");
        return 1;
    }
    jclass main_class = (*env)->FindClass(env, argv[3]);
    jmethodID main_method =
        main_class ? (*env)->GetStaticMethodID(env, main_class, "main", "([Ljava/lang/String;)V") : NULL;
    if (!main_method) {
        (*env)->ExceptionDescribe(env);
        return 1;
    }
    jclass string_class = (*env)->FindClass(env, "java/lang/String");
    jobjectArray args = (*env)->NewObjectArray(env, argc - 4, string_class, NULL);
    for (int i = 4; i < argc; i++) {
        (*env)->SetObjectArrayElement(env, args, i - 4, (*env)->NewStringUTF(env, argv[i]));
    }
    (*env)->CallStaticVoidMethod(env, main_class, main_method, args);
    int failed = (*env)->ExceptionCheck(env);
    if (failed) {
        (*env)->ExceptionDescribe(env);
    }
    (*vm)->DestroyJavaVM(vm);
    return failed ? 1 : 0;
}
