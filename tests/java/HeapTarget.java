import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;

// A JVM for the heap tests: fills its heap with objects of known classes (`count` of each, first
// argument, default 20000), keeps them reachable, collects once so the heap is settled, prints
// READY and then allocates nothing until its standard input closes.
public class HeapTarget {
    static final class Node {
        final int value;
        final Node next;

        Node(int value, Node next) {
            this.value = value;
            this.next = next;
        }
    }

    static Node nodes;
    static byte[][] blobs;
    static long[][] longs;
    static String[] strings;
    static Object[][] nested;
    static List<IntSupplier> lambdas;
    static int[] big;

    public static void main(String[] args) throws Exception {
        int count = args.length > 0 ? Integer.parseInt(args[0]) : 20000;
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
        System.out.println("READY");
        System.out.flush();
        while (System.in.read() != -1) {
            // wait for EOF
        }
    }
}
