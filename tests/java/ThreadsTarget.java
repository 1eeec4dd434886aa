// A JVM for `inspect threads` tests (issue 28): named threads parked in known places, compared
// with `jcmd <pid> Thread.print -l`. Prints READY once every thread has reached its place, and
// exits when its standard input closes, so a test that dies never leaves it behind.
//
// Argument: the number of extra "deep-N" threads parked 20 frames deep (for the benchmark).
import java.lang.reflect.Method;
import java.net.ServerSocket;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

public class ThreadsTarget {
    static final Object outer = new Object();
    static final Object inner = new Object();
    static final Object deadA = new Object();
    static final Object deadB = new Object();
    static final ReentrantLock lockA = new ReentrantLock();
    static final ReentrantLock lockB = new ReentrantLock();
    // Held by t-juc-held, which no thread waits on: only a walk of the heap finds them (`-l`).
    static final ReentrantLock heldLock = new ReentrantLock();
    static final ReentrantReadWriteLock heldRw = new ReentrantReadWriteLock();
    static volatile long sink;

    static Thread start(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    static void waitFor(Thread t, Thread.State... states) throws InterruptedException {
        for (int i = 0; i < 2000; i++) {
            Thread.State s = t.getState();
            for (Thread.State want : states) {
                if (s == want) {
                    return;
                }
            }
            Thread.sleep(5);
        }
        throw new IllegalStateException(t.getName() + " never reached " + java.util.Arrays.toString(states));
    }

    static void objectWait() {
        synchronized (outer) {
            synchronized (inner) {
                try {
                    inner.wait();
                } catch (InterruptedException e) {
                    // exit
                }
            }
        }
    }

    static void lockBoth(Object first, Object second, CountDownLatch both) {
        synchronized (first) {
            both.countDown();
            try {
                both.await();
            } catch (InterruptedException e) {
                return;
            }
            synchronized (second) {
                sink++;
            }
        }
    }

    static void lockBothJuc(ReentrantLock first, ReentrantLock second, CountDownLatch both) {
        first.lock();
        try {
            both.countDown();
            both.await();
            second.lock();
            second.unlock();
        } catch (InterruptedException e) {
            // exit
        } finally {
            first.unlock();
        }
    }

    static void sleepForever() {
        try {
            Thread.sleep(Long.MAX_VALUE);
        } catch (InterruptedException e) {
            // exit
        }
    }

    static void parkForever() {
        while (true) {
            LockSupport.park(outer);
        }
    }

    /** Parked with a class as its blocker: jcmd prints "(a java.lang.Class)", not "for ...". */
    static void parkOnClass() {
        while (true) {
            LockSupport.park(SlowInit.class);
        }
    }

    static void accept(ServerSocket s) {
        try {
            s.accept();
        } catch (Exception e) {
            // exit
        }
    }

    /** A class whose initializer never ends: another thread touching it waits for the init. */
    static class SlowInit {
        static final int VALUE;

        static {
            sleepForever();
            VALUE = 1;
        }
    }

    static int touchSlowInit() {
        return SlowInit.VALUE;
    }

    public static void reflected() {
        sleepForever();
    }

    static void reflective() {
        try {
            Method m = ThreadsTarget.class.getMethod("reflected");
            m.invoke(null);
        } catch (Exception e) {
            // exit
        }
    }

    static void recurse(int depth) {
        if (depth == 0) {
            sleepForever();
        } else {
            recurse(depth - 1);
        }
        sink++;
    }

    /** Pure Java, no calls: stopped, it is running Java code with no frame anchor. */
    static void spin() {
        long x = 0;
        while (true) {
            x = x * 31 + (x >>> 7) + 1;
            sink = x;
        }
    }

    // Allocates without end (`-Dthreads.allocate=true`): a concurrent collector's cycles then
    // run while a dump is taken.
    static void allocate() {
        Object[] keep = new Object[1024];
        int i = 0;
        while (true) {
            keep[i & 1023] = new byte[256 + (i & 1023)];
            i++;
        }
    }

    static void holdJuc() {
        heldLock.lock();
        heldRw.writeLock().lock();
        parkForever();
    }

    static void deep(int depth) {
        if (depth == 0) {
            parkForever();
        } else {
            deep(depth - 1);
        }
        sink++;
    }

    public static void main(String[] args) throws Exception {
        int extra = args.length > 0 ? Integer.parseInt(args[0]) : 0;
        Thread waiter = start("t-object-wait", ThreadsTarget::objectWait);
        waitFor(waiter, Thread.State.WAITING);
        CountDownLatch both = new CountDownLatch(2);
        Thread d1 = start("t-deadlock-1", () -> lockBoth(deadA, deadB, both));
        Thread d2 = start("t-deadlock-2", () -> lockBoth(deadB, deadA, both));
        CountDownLatch bothJuc = new CountDownLatch(2);
        Thread j1 = start("t-juc-deadlock-1", () -> lockBothJuc(lockA, lockB, bothJuc));
        Thread j2 = start("t-juc-deadlock-2", () -> lockBothJuc(lockB, lockA, bothJuc));
        Thread sleeper = start("t-sleep", ThreadsTarget::sleepForever);
        Thread parker = start("t-park", ThreadsTarget::parkForever);
        Thread holder = start("t-juc-held", ThreadsTarget::holdJuc);
        Thread classParker = start("t-park-on-class", ThreadsTarget::parkOnClass);
        ServerSocket server = new ServerSocket(0);
        Thread acceptor = start("t-accept", () -> accept(server));
        Thread initializer = start("t-clinit-owner", ThreadsTarget::touchSlowInit);
        waitFor(initializer, Thread.State.TIMED_WAITING);
        Thread initWaiter = start("t-clinit-waiter", ThreadsTarget::touchSlowInit);
        Thread reflective = start("t-reflective", ThreadsTarget::reflective);
        Thread recursion = start("t-recursion", () -> recurse(200));
        Thread spinner = start("t-spin", ThreadsTarget::spin);
        if (Boolean.getBoolean("threads.allocate")) {
            start("t-allocate", ThreadsTarget::allocate);
        }
        Thread[] deeps = new Thread[extra];
        for (int i = 0; i < extra; i++) {
            deeps[i] = start("deep-" + i, () -> deep(20));
        }
        waitFor(d1, Thread.State.BLOCKED);
        waitFor(d2, Thread.State.BLOCKED);
        waitFor(j1, Thread.State.WAITING);
        waitFor(j2, Thread.State.WAITING);
        waitFor(sleeper, Thread.State.TIMED_WAITING);
        waitFor(parker, Thread.State.WAITING);
        waitFor(holder, Thread.State.WAITING);
        waitFor(classParker, Thread.State.WAITING);
        waitFor(acceptor, Thread.State.RUNNABLE);
        waitFor(initWaiter, Thread.State.RUNNABLE, Thread.State.WAITING);
        waitFor(reflective, Thread.State.TIMED_WAITING);
        waitFor(recursion, Thread.State.TIMED_WAITING);
        for (Thread t : deeps) {
            waitFor(t, Thread.State.WAITING);
        }
        // Let the threads settle in their native waits (accept, class-init) before READY.
        Thread.sleep(200);
        System.out.println("READY");
        System.out.flush();
        while (System.in.read() != -1) {
            // wait for EOF
        }
        System.exit(0);
    }
}
