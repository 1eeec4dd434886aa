// A JVM for the Windows minidump tests under Wine (scripts/windows/minidump.py): prints its Windows
// pid ("PID <n>") and READY, waits for a byte on its standard input, then crashes the VM (a write
// to address 0 through sun.misc.Unsafe: EXCEPTION_ACCESS_VIOLATION in jvm.dll), so that HotSpot
// writes its own crash dump, hs_err_pid<n>.mdmp (with -XX:+CreateCoredumpOnCrash), in its current
// directory.
import java.lang.reflect.Field;

public class WinCrash {
    public static void main(String[] args) throws Exception {
        System.out.println("PID " + ProcessHandle.current().pid());
        System.out.println("READY");
        System.out.flush();
        // System.in.read, not a Reader: under Wine, FileInputStream.available on a pipe fails.
        System.in.read();
        Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        sun.misc.Unsafe unsafe = (sun.misc.Unsafe) f.get(null);
        unsafe.putAddress(0, 1);
    }
}
