// A JVM for the Windows tests under Wine: prints its Windows pid ("PID <n>") and READY, then a
// "TICK <n>" line every 50 ms from a spinning thread (so a test can tell it keeps running), and
// exits when its standard input closes or, with a first argument >= 0, after that many
// milliseconds. A second argument starts that many idle threads.
public class WinTarget {
    public static void main(String[] args) throws Exception {
        long exitAfter = args.length > 0 ? Long.parseLong(args[0]) : -1;
        int idle = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        for (int i = 0; i < idle; i++) {
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
        System.out.println("PID " + ProcessHandle.current().pid());
        System.out.println("READY");
        System.out.flush();
        Thread ticker = new Thread(() -> {
            for (long n = 0; ; n++) {
                System.out.println("TICK " + n);
                System.out.flush();
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "ticker");
        ticker.setDaemon(true);
        ticker.start();
        if (exitAfter >= 0) {
            Thread.sleep(exitAfter);
            System.exit(0);
        }
        while (System.in.read() != -1) {
            // wait for EOF
        }
    }
}
