import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;

// A JVM for the heap tests: fills its heap with objects of known classes (`count` of each, first
// argument, default 20000), keeps them reachable, collects once so the heap is settled, prints
// READY and then allocates nothing until its standard input closes. With -Dheap.thrash=true it
// thrashes instead: it fills its old generation to 80% with byte[1024] ballast and a thread
// keeps replacing the ballast, so that the old generation fills again and again (back-to-back
// full collections); READY comes once 20 more old collections have run. One Local is held only
// by a local variable of main (a JAVA_FRAME root in a heap dump). The known objects above
// stay as they are.
public class HeapTarget {
    static final class Node {
        final int value;
        final Node next;

        Node(int value, Node next) {
            this.value = value;
            this.next = next;
        }
    }

    // Held by main's frame only: allocated first (interpreted, before any loop is compiled),
    // read after the wait so that it stays live.
    static final class Local {
        final int value;

        Local(int value) {
            this.value = value;
        }
    }

    static Node nodes;
    static byte[][] blobs;
    static long[][] longs;
    static String[] strings;
    static Object[][] nested;
    static List<IntSupplier> lambdas;
    static int[] big;
    static byte[][] ballast;

    // The old generation's pool (Tenured Gen, PS Old Gen, G1 Old Gen) and its collectors' count.
    static void thrash() throws Exception {
        long max = 0;
        String oldPool = null;
        for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
            String name = p.getName();
            if (p.getType() == MemoryType.HEAP && (name.contains("Old") || name.contains("Tenured"))) {
                max = p.getUsage().getMax();
                oldPool = name;
            }
        }
        if (oldPool == null || max <= 0) {
            throw new IllegalStateException("no old generation pool with a maximum");
        }
        long used = 0;
        for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
            if (p.getName().equals(oldPool)) {
                used = p.getUsage().getUsed();
            }
        }
        int n = (int) Math.max(0, (max * 8 / 10 - used) / 1040);
        ballast = new byte[n][];
        for (int i = 0; i < n; i++) {
            ballast[i] = new byte[1024];
        }
        final String pool = oldPool;
        long start = oldCollections(pool);
        Thread t = new Thread(() -> {
            java.util.Random r = new java.util.Random(1);
            byte[][] b = ballast;
            while (true) {
                try {
                    b[r.nextInt(b.length)] = new byte[1024];
                } catch (OutOfMemoryError e) {
                    // GC overhead limit: go on thrashing
                }
            }
        }, "thrash");
        t.setDaemon(true);
        t.start();
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (oldCollections(pool) < start + 20 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        System.err.println("thrashing: " + (oldCollections(pool) - start) + " full collections");
    }

    // Full collections so far: Serial's MarkSweepCompact, Parallel's PS MarkSweep, G1's G1 Old
    // Generation.
    static long oldCollections(String pool) {
        long n = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (gc.getName().contains("MarkSweep") || gc.getName().contains("Old")) {
                n += gc.getCollectionCount();
            }
        }
        return n;
    }

    public static void main(String[] args) throws Exception {
        int count = args.length > 0 ? Integer.parseInt(args[0]) : 20000;
        Local local = new Local(count);
        Node n = null;
        for (int i = 0; i < count; i++) {
            n = new Node(i, n);
        }
        nodes = n;
        blobs = new byte[count / 10][];
        for (int i = 0; i < blobs.length; i++) {
            blobs[i] = new byte[100 + i % 50];
        }
        longs = new long[count / 100][];
        for (int i = 0; i < longs.length; i++) {
            longs[i] = new long[i % 7];
        }
        strings = new String[count];
        for (int i = 0; i < count; i++) {
            strings[i] = "s" + i;
        }
        nested = new Object[count / 100][];
        for (int i = 0; i < nested.length; i++) {
            nested[i] = new Object[] {strings[i], nodes};
        }
        lambdas = new ArrayList<>();
        for (int i = 0; i < count / 100; i++) {
            final int k = i;
            lambdas.add(() -> k);
        }
        // Larger than half a G1 region of 1 MiB: a humongous object.
        big = new int[300_000];
        System.gc();
        if (Boolean.getBoolean("heap.thrash")) {
            thrash();
        }
        System.out.println("READY");
        System.out.flush();
        while (System.in.read() != -1) {
            // wait for EOF
        }
        if (local.value < 0) {
            System.out.println(local.value);
        }
    }
}
