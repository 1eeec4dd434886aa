// Target (prints READY once it runs, exits when its standard input closes) with a system property
// set at run time: `runtime.password` = `rt-S3CRET`. The value is built by the program (reversed),
// so neither its command line nor its class file holds it: only the running JVM does. For the
// tests that machine formats never carry a property (tests/integration/formats.rs).
public class RuntimeProperty {
    public static void main(String[] args) throws Exception {
        System.setProperty("runtime.password", new StringBuilder("TERC3S-tr").reverse().toString());
        System.out.println("READY");
        System.out.flush();
        while (System.in.read() != -1) {
            // wait for EOF
        }
    }
}
