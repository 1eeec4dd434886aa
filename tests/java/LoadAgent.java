// Loads a Java agent into a running JVM through the attach API:
//   java LoadAgent <pid> <agent.jar> <agent args>
// Exits 0 once the agent's agentmain returned.
import com.sun.tools.attach.VirtualMachine;

public class LoadAgent {
    public static void main(String[] args) throws Exception {
        VirtualMachine vm = VirtualMachine.attach(args[0]);
        try {
            vm.loadAgent(args[1], args[2]);
        } finally {
            vm.detach();
        }
    }
}
