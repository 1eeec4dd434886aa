// A JVM whose threads start and end all the time, for the no-stop thread-state reads of
// `serve --thread-states` (issue 29): 4 spawners each start short threads (each sleeps 1 ms, then
// ends) one after another, while the heap churns (objects move); beside them, named threads that
// stay: 3 "stay-sleep-N" in Thread.sleep (TIMED_WAITING), 2 "stay-park-N" parked (WAITING).
// Prints READY once the stayers are in place and the churn runs; exits when stdin closes.
import java.util.concurrent.locks.LockSupport;

public class ThreadChurn {
    static volatile Object sink;

    public static void main(String[] args) throws Exception {
        Thread[] stay = new Thread[5];
        for (int i = 0; i < 3; i++) {
            stay[i] = new Thread(() -> {
                while (true) {
                    try {
                        Thread.sleep(60_000);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "stay-sleep-" + i);
        }
        for (int i = 0; i < 2; i++) {
            stay[3 + i] = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    LockSupport.park();
                }
            }, "stay-park-" + i);
        }
        for (Thread t : stay) {
            t.setDaemon(true);
            t.start();
        }
        for (int s = 0; s < 4; s++) {
            Thread spawner = new Thread(() -> {
                while (true) {
                    Thread t = new Thread(() -> {
                        sink = new byte[4096];
                        try {
                            Thread.sleep(1);
                        } catch (InterruptedException e) {
                            // end
                        }
                    }, "short");
                    t.setDaemon(true);
                    t.start();
                    try {
                        t.join();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "spawner-" + s);
            spawner.setDaemon(true);
            spawner.start();
        }
        for (Thread t : stay) {
            while (t.getState() != Thread.State.TIMED_WAITING && t.getState() != Thread.State.WAITING) {
                Thread.sleep(5);
            }
        }
        System.out.println("READY");
        System.out.flush();
        while (System.in.read() != -1) {
            // until stdin closes
        }
    }
}
