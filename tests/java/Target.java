// A JVM for hsinspect's tests: starts `threads` idle threads (first argument, default 0), sets
// the property named by `-Dhsinspect.set=` (if any), prints READY once it runs, and exits when its standard input closes, so a test that dies never leaves
// it behind.
public class Target {
    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 0;
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(() -> {
                try {
                    Thread.sleep(Long.MAX_VALUE);
                } catch (InterruptedException e) {
                    // exit
                }
            }, "idle-" + i);
            t.setDaemon(true);
            t.start();
        }
        // A property set by the program itself, after start-up (`-Dhsinspect.set=<name>`).
        String set = System.getProperty("hsinspect.set");
        if (set != null) {
            System.setProperty(set, "set at run time: caf\u00e9 \u20ac \ud83d\ude00");
        }
        System.out.println("READY");
        System.out.flush();
        while (System.in.read() != -1) {
            // wait for EOF
        }
    }
}
