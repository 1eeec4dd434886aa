// A JVM for the Windows tests under Wine: prints its Windows pid ("PID <n>") and READY, then a
// "TICK <n>" line every 50 ms from a spinning thread (so a test can tell it keeps running), and
// exits when its standard input closes or, with an argument, after that many milliseconds.
public class WinTarget {
    public static void main(String[] args) throws Exception {
        long exitAfter = args.length > 0 ? Long.parseLong(args[0]) : -1;
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
