// A JVM whose counters have moved, for hsinspect's `stat` tests and captures: it allocates until
// the young generation has been collected several times, asks for a full collection
// (System.gc()), loads a few hundred more classes, and runs hot methods until the JIT compiled
// them. Then it prints READY and exits when its standard input closes (as Target does).
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

public class Churn {
    static volatile Object sink;

    static long hot(long x) {
        long h = x;
        for (int i = 0; i < 100; i++) {
            h = h * 31 + (h >>> 7) + i;
        }
        return h;
    }

    public static void main(String[] args) throws Exception {
        // Young collections: a few hundred MB of short-lived garbage through a small heap.
        List<byte[]> keep = new ArrayList<>();
        for (int i = 0; i < 40_000; i++) {
            byte[] b = new byte[8 * 1024];
            sink = b;
            if (i % 1000 == 0) {
                keep.add(new byte[16 * 1024]); // some survivors, promoted later
            }
        }
        sink = keep;
        System.gc();
        // Class loading: streams, regex, concurrent maps, lambdas, a slice of java.base by name.
        String joined = IntStream.range(0, 1000).mapToObj(Integer::toString)
                .filter(Pattern.compile("^[1-9]+0$").asPredicate())
                .collect(Collectors.joining(","));
        ConcurrentHashMap<String, Integer> m = new ConcurrentHashMap<>();
        m.merge(joined, 1, Integer::sum);
        for (String name : new String[] {"java.time.LocalDate", "java.util.zip.CRC32",
                "java.net.URI", "java.text.SimpleDateFormat", "java.util.concurrent.ForkJoinPool",
                "java.math.BigDecimal", "java.util.logging.Logger", "java.nio.file.Files"}) {
            Class.forName(name).getMethods();
        }
        // JIT: a hot method, called until compiled at every tier.
        long acc = 0;
        for (int i = 0; i < 200_000; i++) {
            acc += hot(i);
        }
        sink = acc;
        System.out.println("READY");
        System.out.flush();
        while (System.in.read() != -1) {
            // wait for EOF
        }
    }
}
