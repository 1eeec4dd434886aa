// A JVM for hsinspect's tests: starts `threads` idle threads (first argument, default 0), prints
// READY once it runs, and exits when its standard input closes, so a test that dies never leaves
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
        System.out.println("READY");
        System.out.flush();
        while (System.in.read() != -1) {
            // wait for EOF
        }
    }
}
